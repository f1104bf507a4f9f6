package experiment_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"goldstone/experiment"
)

// prunedSearch is the search table of searchHead (steps = 50) with pruner
// keys.
func prunedSearch(keys string) string {
	return searchHead + "sampler = \"tpe\"\ntrials = 12\nobjective = \"final_loss\"\ndirection = \"minimize\"\n" + keys +
		"\n[experiments.s.search.space]\nlr = { log_uniform = [0.01, 1.0] }\n"
}

func TestPrunerTable(t *testing.T) {
	for _, tt := range []struct {
		keys  string
		rungs []int
		want  experiment.Pruning
	}{
		{"pruner = \"asha\"\nmin_steps = 5\neta = 3\n", []int{5, 16, 50}, experiment.Pruning{Pruner: "asha", MinSteps: 5, Eta: 3, MaxSteps: 50, Brackets: 1}},
		{"pruner = \"successive_halving\"\nmin_steps = 10\neta = 2\nmax_steps = 50\n", []int{12, 25, 50}, experiment.Pruning{Pruner: "successive_halving", MinSteps: 10, Eta: 2, MaxSteps: 50, Brackets: 1}},
		{"pruner = \"hyperband\"\nmin_steps = 5\n", []int{5, 16, 50}, experiment.Pruning{Pruner: "hyperband", MinSteps: 5, Eta: 3, MaxSteps: 50, Brackets: 3}},
		{"pruner = \"median\"\nmin_steps = 50\n", []int{50}, experiment.Pruning{Pruner: "median", MinSteps: 50, Eta: 3, MaxSteps: 50, Brackets: 1}},
	} {
		c, err := experiment.ParseConfig("x.toml", []byte(prunedSearch(tt.keys)))
		if err != nil {
			t.Fatal(err)
		}
		p := c.Experiments["s"].Search.Pruning
		if p == nil || *p != tt.want || !reflect.DeepEqual(p.Rungs(), tt.rungs) {
			t.Fatalf("%s: pruning %+v rungs %v; want %+v %v", tt.keys, p, p.Rungs(), tt.want, tt.rungs)
		}
	}
	c, err := experiment.ParseConfig("x.toml", []byte(prunedSearch("pruner = \"none\"\n")))
	if err != nil || c.Experiments["s"].Search.Pruning != nil {
		t.Fatalf("pruner none: %v", err)
	}
	// --set steps moves the last rung; a grid of steps is refused.
	c, _ = experiment.ParseConfig("x.toml", []byte(prunedSearch("pruner = \"asha\"\nmin_steps = 5\n")))
	e := c.Experiments["s"]
	if err := e.Override([]string{"steps=90"}); err != nil || !reflect.DeepEqual(e.Search.Pruning.Rungs(), []int{10, 30, 90}) {
		t.Fatalf("--set steps=90: %v, rungs %v", err, e.Search.Pruning.Rungs())
	}
	if err := e.Override([]string{"steps=3"}); err == nil || !strings.Contains(err.Error(), "min_steps") {
		t.Fatalf("--set steps=3 below min_steps: %v", err)
	}
	if err := e.Override([]string{"steps=60,90"}); err == nil || !strings.Contains(err.Error(), "one value") {
		t.Fatalf("--set steps=60,90: %v", err)
	}
}

// TestPrunerTableErrors: a bad pruner stops decoding with one line naming
// the file, the line and the key (runner plan and run then record nothing).
func TestPrunerTableErrors(t *testing.T) {
	for _, tt := range []struct {
		name, keys, want string
		line             int
	}{
		{"unknown pruner", "pruner = \"hyperbandit\"\nmin_steps = 5\n", `search.pruner: "hyperbandit": want one of asha, successive_halving, hyperband, median, none`, 16},
		{"keys without pruner", "min_steps = 5\n", `search.pruner: "": want one of`, 11},
		{"eta below 2", "pruner = \"asha\"\nmin_steps = 5\neta = 1\n", "search.eta: must be >= 2", 18},
		{"no min_steps", "pruner = \"asha\"\n", "search.min_steps: want the first rung's steps", 11},
		{"min above max", "pruner = \"asha\"\nmin_steps = 60\n", "search.min_steps: 60 is more than max_steps (the trials' steps, 50)", 17},
		{"max not steps", "pruner = \"asha\"\nmin_steps = 5\nmax_steps = 40\n", "search.max_steps: 40 is not the trials' steps (50)", 18},
		{"brackets not hyperband", "pruner = \"asha\"\nmin_steps = 5\nbrackets = 2\n", "search.brackets: only hyperband has brackets", 18},
		{"too many brackets", "pruner = \"hyperband\"\nmin_steps = 5\nbrackets = 4\n", "search.brackets: 4 brackets for 3 rungs", 18},
		{"none with keys", "pruner = \"none\"\neta = 3\n", "takes no min_steps", 16},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := experiment.ParseConfig("x.toml", []byte(prunedSearch(tt.keys)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			var ce *experiment.ConfigError
			if !errors.As(err, &ce) || ce.Line != tt.line || !strings.HasPrefix(err.Error(), fmt.Sprintf("x.toml:%d: ", tt.line)) {
				t.Fatalf("error %q: want line %d", err, tt.line)
			}
		})
	}
	// steps searched or in the grid: the budget must be one value.
	doc := strings.Replace(prunedSearch("pruner = \"asha\"\nmin_steps = 5\n"), "seed = [1, 2]", "seed = [1, 2]\nsteps = [50, 60]", 1)
	if _, err := experiment.ParseConfig("x.toml", []byte(doc)); err == nil || !strings.Contains(err.Error(), "must be one value") {
		t.Fatalf("steps in the grid: %v", err)
	}
}

// TestASHAUnreachedLastRung: ASHA over too few points for its rungs (it
// promotes the best floor(n/eta), so the last rung needs trials >=
// eta^(rungs-1)) is refused at parse with the file and line of min_steps
// and what would do; at the bound it is accepted; --set steps or
// search.trials that make the last rung unreachable are refused naming the
// key; successive halving (max(1, n/eta)) is not concerned.
func TestASHAUnreachedLastRung(t *testing.T) {
	doc := func(trials int, pruner string) string {
		return strings.Replace(prunedSearch("pruner = \""+pruner+"\"\nmin_steps = 5\n"), "trials = 12", fmt.Sprintf("trials = %d", trials), 1)
	}
	// steps 50, min_steps 5, eta 3: rungs 5, 16, 50 need 9 points.
	_, err := experiment.ParseConfig("x.toml", []byte(doc(8, "asha")))
	want := "x.toml:17: experiments.s.search.min_steps: asha over 8 points with eta 3 reaches at most rung 1 of 2 (16 steps): no point would train to the trials' 50 steps, and the search would choose nothing; use trials >= 9, min_steps >= 16 or fewer steps"
	if err == nil || err.Error() != want {
		t.Fatalf("8 points:\n got %v\nwant %s", err, want)
	}
	for _, c := range []struct {
		trials int
		pruner string
	}{{9, "asha"}, {2, "successive_halving"}} {
		if _, err := experiment.ParseConfig("x.toml", []byte(doc(c.trials, c.pruner))); err != nil {
			t.Fatalf("%s over %d points: %v", c.pruner, c.trials, err)
		}
	}
	parse := func() *experiment.Experiment {
		c, err := experiment.ParseConfig("x.toml", []byte(doc(9, "asha")))
		if err != nil {
			t.Fatal(err)
		}
		return c.Experiments["s"]
	}
	for _, set := range []struct{ set, key string }{{"steps=150", "steps"}, {"search.trials=8", "search.trials"}} {
		err := parse().Override([]string{set.set})
		if err == nil || !strings.HasPrefix(err.Error(), "--set: "+set.key+": asha over ") {
			t.Errorf("--set %s: %v", set.set, err)
		}
	}
	if err := parse().Override([]string{"steps=60", "search.trials=9"}); err != nil {
		t.Errorf("--set steps=60 (rungs 6, 20, 60 for 9 points): %v", err)
	}
}
