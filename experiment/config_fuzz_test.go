package experiment_test

import (
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/search"
	_ "goldstone/stages/pipelines" // registers the pipelines
)

// maxTrials keeps the fuzzers from expanding grids of millions of trials.
const maxTrials = 10000

func gridSize(e *experiment.Experiment) int {
	n := max(1, len(e.Variants))
	for _, ax := range e.Grid {
		n *= len(ax.Values)
		if n > maxTrials {
			return n
		}
	}
	return n
}

// checkExperiment checks what every accepted experiment must satisfy: its
// trials have distinct ids, its resolved configuration is deterministic and
// survives the round trip through the results database (repro rebuilds it
// from there).
func checkExperiment(t *testing.T, e *experiment.Experiment) {
	if gridSize(e) > maxTrials {
		return
	}
	trials := e.Trials()
	if len(trials) == 0 {
		t.Fatalf("experiment %s has no trials", e.Name)
	}
	seen := map[string]bool{}
	for _, tr := range trials {
		if seen[tr.ID] {
			t.Fatalf("experiment %s: trial id %s twice", e.Name, tr.ID)
		}
		seen[tr.ID] = true
	}
	js, hash := e.Resolved()
	if js2, hash2 := e.Resolved(); js2 != js || hash2 != hash {
		t.Fatalf("Resolved is not deterministic")
	}
	if e.Search != nil {
		checkSearch(t, e)
		return
	}
	back, err := experiment.ExperimentFromResolved(js)
	if err != nil {
		t.Fatalf("resolved configuration does not load back: %v\n%s", err, js)
	}
	if _, h := back.Resolved(); h != hash {
		t.Fatalf("resolved configuration changed in the round trip:\n%s", js)
	}
}

// checkSearch checks an accepted search: it is rebuilt from its record
// (ExperimentFromResolved) with the same resolved configuration, and the
// first wave of random points gives trials whose resolved configuration
// is the search's.
func checkSearch(t *testing.T, e *experiment.Experiment) {
	js, hash := e.Resolved()
	back, err := experiment.ExperimentFromResolved(js)
	if err != nil {
		t.Fatalf("a search does not load back from its record: %v\n%s", err, js)
	}
	if js2, h := back.Resolved(); h != hash {
		t.Fatalf("a search changed in the round trip:\n%s\n%s", js, js2)
	}
	pts, err := search.Random{}.Suggest(&e.Search.Space, e.Search.Seed, nil, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.Wave(0, pts)
	if err != nil {
		t.Fatalf("wave of %v: %v", pts, err)
	}
	if gridSize(w) > maxTrials {
		return
	}
	if len(w.Trials()) == 0 {
		t.Fatalf("a wave of 3 points has no trials")
	}
	if _, h := w.Resolved(); h != hash {
		t.Fatalf("a wave changed the resolved configuration")
	}
}

// checkError checks a rejected input's error: it names where the bad value
// came from (the runner prints it as one line, collapsing white space).
func checkError(t *testing.T, err error, source string) {
	if err.Error() == "" || !strings.Contains(err.Error(), source) {
		t.Fatalf("error does not name %s: %q", source, err)
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"[experiments.a]\npipeline = \"artificial\"\n[experiments.a.settings]\nsteps = 10\n[experiments.a.grid]\nseed = [1, 2]\n",
		"[experiments.a]\npipeline = \"artificial\"\n[[experiments.a.variants]]\nname = \"g\"\ngauge = \"goldstone\"\n",
		"[experiments.m]\npipeline = \"movielens\"\n[experiments.m.settings]\nbins = 3\nlambda = 1e3\n",
		"[experiments.d]\npipeline = \"dwe\"\n[experiments.d.settings]\ndim = 4\n",
		"[experiments.x]\npipeline = \"artificial\"\n[experiments.x.settings]\nstepz = 3\n",
		"[experiments.x]\npipeline = \"artificial\"\n[experiments.x.grid]\nseed = []\n",
		"[experiments.s]\npipeline = \"artificial\"\n[experiments.s.search]\nsampler = \"tpe\"\ntrials = 5\nobjective = \"final_loss\"\ndirection = \"minimize\"\n[experiments.s.search.space]\nlr = { log_uniform = [0.1, 1.0] }\ngauge = { choice = [\"none\", \"goldstone\"] }\nk1 = { int = [5, 50], when = { gauge = [\"goldstone\"] } }\n",
		"[experiments]\n",
		"x = \"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := experiment.ParseConfig("fuzz.toml", data)
		if err != nil {
			checkError(t, err, "fuzz.toml")
			return
		}
		for _, e := range c.Experiments {
			checkExperiment(t, e)
		}
	})
}

func FuzzSetValue(f *testing.F) {
	for _, s := range []string{
		"steps=100", "seed=[1, 2, 3]", "lr=1e-3", "clip=[0.01,0]", "gauge=\"goldstone\"", "gauge=procrustes",
		"snapshots=[0, 400]", "lambda=-1", "steps=0", "steps=1e400", "=3", "seed=[]", "lr=nan", "k1=[[1]]",
		"time_steps=\"6\"", "seed=[1,1]",
	} {
		f.Add(s)
	}
	const base = "[experiments.a]\npipeline = \"artificial\"\n[experiments.a.settings]\nsteps = 10\n[experiments.a.grid]\nseed = [1, 2]\n"
	f.Fuzz(func(t *testing.T, set string) {
		c, err := experiment.ParseConfig("base.toml", []byte(base))
		if err != nil {
			t.Fatal(err)
		}
		e := c.Experiments["a"]
		if err := e.Override([]string{set}); err != nil {
			checkError(t, err, "--set")
			return
		}
		checkExperiment(t, e)
	})
}
