package sweep_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/runs"
	"goldstone/sweep"
)

// TestSearchReplayAndRepro: the waves of a finished search are rebuilt
// from its record and results (SearchWave: the run's trials, in order); a
// repro search (kind repro) is a new run whose waves it suggests from its
// own results, resumed wave by wave: the same trials and values; and a run
// whose results no longer give its points is named, point and trial.
func TestSearchReplayAndRepro(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := runSearch(ctx, dir, 2); err != nil {
		t.Fatal(err)
	}
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ri, err := st.LatestRun(ctx, "srch", runs.KindRun)
	if err != nil {
		t.Fatal(err)
	}
	e, err := experiment.ExperimentFromResolved(ri.ConfigJSON)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sweep.SearchWave(ctx, st, ri.ID, e)
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := st.TrialTable(ctx, ri.ID)
	if err != nil {
		t.Fatal(err)
	}
	trials := w.Trials()
	if len(trials) != 32 || len(recorded) != 32 {
		t.Fatalf("%d trials replayed, %d recorded; want 32", len(trials), len(recorded))
	}
	for i, tr := range trials {
		if tr.ID != recorded[i].ID {
			t.Fatalf("trial %d replayed as %s (%s), recorded %s (%s)", i, tr.ID, tr.Name, recorded[i].ID, recorded[i].Name)
		}
	}

	out, err := sweep.Search(ctx, st, e, sweep.Local{}, sweep.RunOptions{WorkDir: filepath.Join(dir, "repro-work"), Jobs: 2, Cores: 2, Force: true, Kind: runs.KindRepro})
	if err != nil || out.RunID == ri.ID || out.Status != runs.StatusFinished || out.Trials != 32 || out.Done != 32 {
		t.Fatalf("repro search: %+v, %v", out, err)
	}
	a, _ := st.Summaries(ctx, ri.ID)
	b, _ := st.Summaries(ctx, out.RunID)
	if len(a) != 32 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("the repro's results differ:\n%v\n%v", a, b)
	}
	if all, _ := st.Runs(ctx, "srch"); len(all) != 2 {
		t.Fatalf("%d runs, want the search and one repro", len(all))
	}
	recParams, _ := st.TrialParams(ctx, ri.ID)
	nowParams, _ := st.TrialParams(ctx, out.RunID)
	recName, nowName := sweep.TrialNamers(w, recParams)
	if d := sweep.PointDrifts(e, sweep.ByName(recParams, recName), sweep.ByName(nowParams, nowName)); len(d) != 0 {
		t.Fatalf("the repro suggested other points: %v", d)
	}
	nowParams[trials[3].ID]["x"] = "0.125"
	if d := sweep.PointDrifts(e, sweep.ByName(recParams, recName), sweep.ByName(nowParams, nowName)); len(d) != 1 || !strings.Contains(d[0], `trial "s1 seed=2" x: recorded `) {
		t.Fatalf("a point suggested otherwise: %v", d)
	}

	// Another seed suggests other points than the run recorded.
	e.Search.Seed++
	if _, err := sweep.SearchWave(ctx, st, ri.ID, e); err == nil || !strings.Contains(err.Error(), "suggests point s0") {
		t.Fatalf("a replay that suggests other points: %v", err)
	}
}
