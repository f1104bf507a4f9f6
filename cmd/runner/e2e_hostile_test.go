package main

// Failure paths, round 3: bad and hostile input, end to end.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Item 7: a gzip bomb stops the ingest at max_input_bytes with one line naming the file
// and the setting, exit 2, its trials pending; raised, the same command ingests it.
func TestDecompressionBombStops(t *testing.T) {
	rows := "userId,movieId,rating,timestamp\n" + strings.Repeat("1,1,5,1000000000\n", 1<<19) // 8.9 MB, 18 KB of gzip
	bomb := filepath.Join(t.TempDir(), "bomb.csv.gz")
	if err := os.WriteFile(bomb, gz(t, []byte(rows)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := mlDataEnv(t, bomb)
	_, errs, code := e.run("--experiment", "mlbad", "--quiet", "--set", "max_input_bytes=1048576")
	line := errorLine(t, errs)
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("exit %d, want 2 and one line:\n%s", code, errs)
	}
	for _, w := range []string{bomb, "larger than 1048576 bytes", "max_input_bytes"} {
		if !strings.Contains(line, w) {
			t.Errorf("%q does not say %q", line, w)
		}
	}
	if got := e.trialStatuses(1); got["pending"] != 3 {
		t.Errorf("trials %v, want 3 pending", got)
	}
}

// starsFile writes a ratings.csv of n ratings, the first share of them one star and the
// others five (users 1-7, items 1-11), with a share of three-star ratings in between
// when mid > 0, and returns its path.
func starsFile(t *testing.T, n int, one, mid float64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("userId,movieId,rating,timestamp\n")
	for k := range n {
		stars := 5
		switch f := float64(k) / float64(n); {
		case f < one:
			stars = 1
		case f < one+mid:
			stars = 3
		}
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", 1+k%7, 1+k%11, stars, 1500000000+60*k)
	}
	path := filepath.Join(t.TempDir(), "ratings.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Item 5: the file (3,000 ratings, 90% one-star: median 1, every kept rating
// positive) stops at plan and at run, before a run is recorded, with one line naming
// the data file and binarize_ties; with binarize_ties = "negative" it runs, and each
// trial's summary has the binarization's counts.
func TestUnbinarizableStopsAtPlan(t *testing.T) {
	ratings := starsFile(t, 3000, 0.9, 0)
	e := mlDataEnv(t, ratings)
	for _, args := range [][]string{{"plan", "--experiment", "mlbad"}, {"--experiment", "mlbad", "--quiet"}} {
		_, errs, code := e.run(args...)
		line := errorLine(t, errs)
		if code != 2 {
			t.Errorf("runner %v: exit %d, want 2: %s", args, code, line)
		}
		for _, w := range []string{ratings + ": cannot binarize at the median", "2700 of 3000 ratings equal the median 1", `binarize_ties = "negative"`} {
			if !strings.Contains(line, w) {
				t.Errorf("runner %v: %q does not say %q", args, line, w)
			}
		}
	}
	if n := e.runCount(); n != 0 {
		t.Errorf("%d runs recorded, want none", n)
	}
	e.mustRun(0, "--experiment", "mlbad", "--quiet", "--set", `binarize_ties="negative"`)
	rs := e.results("mlbad")
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	for _, r := range rs {
		got := map[string]float64{}
		for _, k := range []string{"binarize_kept", "binarize_ties_dropped", "binarize_positive", "binarize_negative"} {
			if v := r.Metrics[k]; v != nil {
				got[k] = float64(*v)
			}
		}
		if want := map[string]float64{"binarize_kept": 3000, "binarize_ties_dropped": 0, "binarize_positive": 300, "binarize_negative": 2700}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("trial %s: %v, want %v", r.Trial, got, want)
		}
	}
}

// Item 5: a binarization that drops more than binarize_warn_share (0.25) of the ratings
// as ties says so with --quiet, at plan and at every run, the cached ones included.
func TestBinarizeWarningUnderQuiet(t *testing.T) {
	e := mlDataEnv(t, starsFile(t, 1000, 0.3, 0.4)) // 40% three-star: the median
	for _, args := range [][]string{{"plan", "--experiment", "mlbad", "--quiet"}, {"--experiment", "mlbad", "--quiet"}, {"--experiment", "mlbad", "--quiet"}} {
		_, errs, code := e.run(args...)
		if code != 0 || !strings.Contains(errs, "level=WARN") || !strings.Contains(errs, "binarizing drops 400 of 1000 ratings (40.0%, more than binarize_warn_share = 0.25)") {
			t.Errorf("runner %v: exit %d, stderr without the warning:\n%s", args, code, errs)
		}
	}
}
