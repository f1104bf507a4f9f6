package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Vocabulary of the synthetic corpus: 16 function words, 4 words common at
// all times and 5 topics of 8 words whose prevalence drifts over the years
// (topic k peaks around 1800 + k*57.5), 60 words in all.
var (
	dweFunction = strings.Fields("the of and a to in is that for it as with was on by be")
	dweCommon   = strings.Fields("people river land year")
	dweTopics   = [][]string{
		strings.Fields("horse carriage candle farm plough mill sail musket"),
		strings.Fields("steam rail coal iron factory engine canal telegraph"),
		strings.Fields("electric radio motor oil steel wire film phone"),
		strings.Fields("computer digital network software data online chip screen"),
		strings.Fields("robot quantum drone climate solar gene cloud orbit"),
	}
)

// dweText generates about n tokens of sentences for a year: each sentence
// draws a topic with a weight that depends on the year, then alternates
// function words with words of the topic and the common words.
func dweText(year, n int, rng *rand.Rand) string {
	w := make([]float64, len(dweTopics))
	var total float64
	for k := range w {
		c := 1800 + float64(k)*57.5
		w[k] = math.Exp(-math.Pow((float64(year)-c)/50, 2)) + 0.02
		total += w[k]
	}
	var b strings.Builder
	for tokens := 0; tokens < n; {
		u, k := rng.Float64()*total, 0
		for ; k < len(w)-1 && u > w[k]; k++ {
			u -= w[k]
		}
		for i := 0; i < 8; i++ {
			var word string
			switch {
			case i%2 == 0:
				word = dweFunction[rng.IntN(len(dweFunction))]
			case rng.IntN(4) == 0:
				word = dweCommon[rng.IntN(len(dweCommon))]
			default:
				word = dweTopics[k][rng.IntN(len(dweTopics[k]))]
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(word)
			tokens++
		}
		b.WriteString(". ")
	}
	return b.String()
}

// writeDWECorpus writes one file per decade 1800..2030 named
// "<year>_x_y.txt", and a second file for 1900.
func writeDWECorpus(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "corpus")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	write := func(name string, year int) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(dweText(year, 320, rng)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for y := 1800; y <= 2030; y += 10 {
		write(fmt.Sprintf("%d_x_y.txt", y), y)
	}
	write("1900_x_z.txt", 1900)
	return dir
}

// dweData is the data and model size of the e2e dwe experiments (corpus:
// the %q of writeDWECorpus's directory).
const dweData = `corpus = %q
corpus_format = "text"
bin_years = 10
heldout = 2
valid_steps = 1
vocab = 50
dim = 3
`

const dweConfig = `
[experiments.words]
pipeline = "dwe"
[experiments.words.settings]
` + dweData + `steps = 40
minibatch_steps = 20
minibatch_words = 20
k1 = 10
k2 = 10
optimizer = "adam"
lr = 0.1
queries = ["river", "the", "nosuchword"]
[[experiments.words.variants]]
name = "none"
gauge = "none"
[[experiments.words.variants]]
name = "goldstone"
gauge = "goldstone"
`

func TestDWEEndToEnd(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(fmt.Sprintf(dweConfig, writeDWECorpus(t)))
	out := e.mustRun(0, "--experiment", "words", "--jobs", "2", "--quiet")
	if !strings.Contains(out, "2 trials: 2 done, 0 failed") {
		t.Fatalf("unexpected summary: %s", out)
	}
	rs := e.results("words")
	if len(rs) != 2 {
		t.Fatalf("%d result rows, want 2", len(rs))
	}
	for _, r := range rs {
		if r.Status != "done" {
			t.Fatalf("trial %s: status %s", r.Trial, r.Status)
		}
		for _, k := range []string{"test_ll", "valid_ll", "median_first_last_cos"} {
			v := r.Metrics[k]
			if v == nil || math.IsNaN(float64(*v)) || math.IsInf(float64(*v), 0) {
				t.Errorf("trial %s (%v): metric %s missing or not finite: %v", r.Trial, r.Params["variant"], k, v)
			}
		}
		if t.Failed() {
			continue
		}
		t.Logf("trial %s (%v): test_ll %.4f valid_ll %.4f median_first_last_cos %.4f", r.Trial, r.Params["variant"],
			*r.Metrics["test_ll"], *r.Metrics["valid_ll"], *r.Metrics["median_first_last_cos"])
		// 40 steps barely move the embeddings off their small random start
		// (the OU prior dominates the loss), so the predictive
		// log-likelihood per point stays near chance, log(1/2): observed
		// -0.6931 for both variants.
		if v := r.Metrics["test_ll"]; v != nil && !(*v < 0 && *v > -2) {
			t.Errorf("trial %s: test_ll %v, want in (-2, 0)", r.Trial, *v)
		}
		if v := r.Metrics["median_first_last_cos"]; v != nil && !(*v >= -1 && *v <= 1) {
			t.Errorf("trial %s: median cosine %v outside [-1, 1]", r.Trial, *v)
		}
	}

	var runID int64
	db := e.db()
	if err := db.QueryRow(`SELECT max(id) FROM runs WHERE experiment = 'words'`).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT path FROM artifacts WHERE run_id = ?`, runID)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for rows.Next() {
		var p string
		rows.Scan(&p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.dir, p)
		}
		paths[filepath.Base(p)] = p
	}
	rows.Close()
	for _, name := range []string{"figure4.png", "report.md"} {
		if paths[name] == "" {
			t.Errorf("artifacts lack %s (have %v)", name, paths)
		}
	}
	if p := paths["report.md"]; p != "" {
		report, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(report), "| nosuchword | (not in the vocabulary) |") {
			t.Errorf("report.md does not flag the unknown query:\n%s", report)
		}
		if strings.Contains(string(report), "| river | (not in the vocabulary) |") {
			t.Errorf("report.md says a common word is not in the vocabulary:\n%s", report)
		}
	}

	// Word aging to the first time step: five words per trial.
	words := e.mustRun(0, "words", "--experiment", "words", "--age", "river", "--to", "1800")
	line := regexp.MustCompile(`(?m)^  river -> (.+)$`)
	m := line.FindAllStringSubmatch(words, -1)
	if len(m) != 2 {
		t.Fatalf("words --age river: want a line per trial (2), got %d:\n%s", len(m), words)
	}
	for _, x := range m {
		ws := strings.Split(x[1], ", ")
		if len(ws) != 5 {
			t.Errorf("aging lists %d words, want 5: %q", len(ws), x[0])
		}
		for _, w := range ws {
			if w == "river" || w == "" {
				t.Errorf("aging lists %q: %q", w, x[0])
			}
		}
	}
	// Time stamps are the bins' centres: the first bin (1800-1809) and the last (2030-2039).
	spans := regexp.MustCompile(`from (\d+) to (\d+)`).FindAllStringSubmatch(words, -1)
	if len(spans) != 2 {
		t.Fatalf("words: want 2 'from .. to ..' headers:\n%s", words)
	}
	for _, sp := range spans {
		if sp[1] < "2030" || sp[1] > "2039" || sp[2] < "1800" || sp[2] > "1809" {
			t.Errorf("words: aged %s, want from the last decade to the first", sp[0])
		}
	}
	missing := e.mustRun(0, "words", "--experiment", "words", "--age", "nosuchword")
	if strings.Count(missing, "not in the vocabulary") != 2 {
		t.Errorf("words --age nosuchword: want 'not in the vocabulary' for both trials:\n%s", missing)
	}
}
