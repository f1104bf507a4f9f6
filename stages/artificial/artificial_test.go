package artificial

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/optim"
	"goldstone/train"
	"goldstone/trialio"
)

func artificialSettings(t *testing.T, sets ...string) TrainSettings {
	t.Helper()
	c, err := experiment.ParseConfig("t.toml", []byte("[experiments.a]\npipeline = \"artificial\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["a"]
	if err := e.Override(sets); err != nil {
		t.Fatal(err)
	}
	return settings.MustDecode[TrainSettings](e.Trials()[0].Settings)
}

func TestTrainWritesResults(t *testing.T) {
	s := artificialSettings(t, "steps=300", "gauge=goldstone", "k1=50", "clip=0.01", "lr=1", "lr_s0=100", "snapshots=[0, 300]")
	dir := t.TempDir()
	if err := Train(context.Background(), s, nil, dir, train.StageIO{}); err != nil {
		t.Fatal(err)
	}
	sum, err := trialio.ReadSummary(dir + "/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	ser, err := trialio.ReadSeries(dir + "/series.arrow")
	if err != nil {
		t.Fatal(err)
	}
	_, ex := ser.Of("excess")
	if len(ex) != 300 {
		t.Fatalf("excess has %d points, want 300", len(ex))
	}
	if !(ex[len(ex)-1] < ex[0]) {
		t.Fatalf("excess did not fall: %v -> %v", ex[0], ex[len(ex)-1])
	}
	for _, k := range []string{"final_excess", "final_psi", "l_star", "wall_seconds", "gauge_seconds", "gap_seconds", "steps_to_excess_1", "steps_to_excess_0.1", "steps_to_excess_0.01"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %s", k)
		}
	}
	if math.IsNaN(sum["final_excess"]) || sum["final_excess"] < -1e-9 {
		t.Fatalf("final excess %v", sum["final_excess"])
	}
}

// TestTrainDiverged: a training that diverges is a result: the stage
// writes its files, the series end before the divergence, the summary says
// where (a finite value past the bound, not Inf), and every threshold is
// never.
func TestTrainDiverged(t *testing.T) {
	for _, c := range []struct {
		name     string
		sets     []string
		quantity string
	}{
		{"gd without clipping", []string{"clip=0", "lr=1"}, "local loss"},
		{"the paper's update at a large gauge rate", []string{"gauge=goldstone", "rotation=linear", "guard=false", "flip_walls=false", "k1=10", "gauge_lr=50"}, "psi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := artificialSettings(t, append([]string{"steps=300", "snapshots=[0, 300]"}, c.sets...)...)
			dir := t.TempDir()
			if err := Train(context.Background(), s, nil, dir, train.StageIO{}); err != nil {
				t.Fatalf("a diverged training is not an error: %v", err)
			}
			sum, err := trialio.ReadSummary(dir + "/summary.json")
			if err != nil {
				t.Fatal(err)
			}
			d, ok := sum.Divergence()
			if !ok || !d.Finite() || d.Quantity != c.quantity || d.Step <= 0 || d.Step >= 300 {
				t.Fatalf("divergence %+v (%v), want a finite %s past its bound before step 300", d, ok, c.quantity)
			}
			t.Log(d)
			for _, k := range []string{"final_excess", "final_loss", "final_psi", "final_gauge_gap"} {
				if !math.IsNaN(sum[k]) {
					t.Errorf("%s = %v, want NaN", k, sum[k])
				}
			}
			for _, k := range []string{"steps_to_excess_1", "steps_to_excess_0.1", "steps_to_excess_0.01", "steps_to_gap_1pct"} {
				if sum[k] != math.Inf(1) {
					t.Errorf("%s = %v, want never", k, sum[k])
				}
			}
			ser, err := trialio.ReadSeries(dir + "/series.arrow")
			if err != nil {
				t.Fatal(err)
			}
			if st, _ := ser.Of("loss"); len(st) != d.Step {
				t.Errorf("loss recorded at %d steps, want the %d before the divergence", len(st), d.Step)
			}
		})
	}
}

// TestTrainFailsWithoutAFiniteStart: a loss that is not finite at the
// initial iterate is an error of the data or the initialisation, not a
// divergence: nothing was trained.
func TestTrainFailsWithoutAFiniteStart(t *testing.T) {
	s := artificialSettings(t, "steps=30", "snapshots=[0]", "init_scale=1e200")
	err := Train(context.Background(), s, nil, t.TempDir(), train.StageIO{})
	if !errors.Is(err, optim.ErrDiverged) || !strings.Contains(err.Error(), "step 0: ") || !strings.Contains(err.Error(), "initial iterate") {
		t.Fatalf("err %v, want an error at step 0 naming the initial iterate", err)
	}
}

// TestInitShared: init_shared starts every time step from the same draw,
// so psi is 0 at step 0 (no walls, no twists); the default draws each time
// step independently (psi > 0); and the setting stays out of the key at its
// default.
func TestInitShared(t *testing.T) {
	psi0 := func(sets ...string) float64 {
		s := artificialSettings(t, append([]string{"steps=2", "gauge=none", "snapshots=[0]"}, sets...)...)
		dir := t.TempDir()
		if err := Train(context.Background(), s, nil, dir, train.StageIO{}); err != nil {
			t.Fatal(err)
		}
		ser, err := trialio.ReadSeries(dir + "/series.arrow")
		if err != nil {
			t.Fatal(err)
		}
		steps, psi := ser.Of("psi")
		if len(psi) == 0 || steps[0] != 0 {
			t.Fatalf("psi series %v at steps %v: want a record at step 0", psi, steps)
		}
		return psi[0]
	}
	if p := psi0("init_shared=true"); p != 0 {
		t.Errorf("init_shared: psi at step 0 = %v, want 0", p)
	}
	if p := psi0(); !(p > 0) {
		t.Errorf("default start: psi at step 0 = %v, want > 0 (independent draws)", p)
	}
	if _, ok := settings.Keys(artificialSettings(t))["init_shared"]; ok {
		t.Error("init_shared at its default is in the key")
	}
	if _, ok := settings.Keys(artificialSettings(t, "init_shared=true"))["init_shared"]; !ok {
		t.Error("init_shared=true is not in the key")
	}
}

// TestEarlyStoppingRefused: the artificial pipeline has no held-out data,
// so early_stopping (and patience, valid_every) stop the config with one
// line naming the file, the line, the key and why.
func TestEarlyStoppingRefused(t *testing.T) {
	for _, key := range []string{"early_stopping = true", "patience = 3", "valid_every = 5"} {
		doc := "[experiments.a]\npipeline = \"artificial\"\n[experiments.a.settings]\nsteps = 10\n" + key + "\n"
		_, err := experiment.ParseConfig("x.toml", []byte(doc))
		name, _, _ := strings.Cut(key, " ")
		if err == nil || !strings.Contains(err.Error(), "x.toml:5: experiments.a.settings."+name+": pipeline \"artificial\" refuses it: early stopping needs held-out validation data") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", key, err)
		}
	}
}
