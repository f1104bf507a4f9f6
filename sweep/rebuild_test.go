package sweep

import (
	"testing"

	"goldstone/experiment"
	"goldstone/runs"
)

// TestRecordedTrials: a rebuilt report pairs the experiment's trials with
// the run's records by trial id; by name only for an id the run did not
// record (a newer version added a setting), and a run of one trial, whose
// name is "", with its only record.
func TestRecordedTrials(t *testing.T) {
	row := func(id, name string) runs.TrialRow {
		return runs.TrialRow{Trial: runs.Trial{ID: id, Status: runs.StatusDone}, Name: name}
	}
	built := func(trials ...experiment.Trial) *experiment.Built {
		b := &experiment.Built{}
		for _, tr := range trials {
			b.Trials = append(b.Trials, experiment.TrialNodes{Trial: tr})
		}
		return b
	}
	for _, c := range []struct {
		name  string
		rows  []runs.TrialRow
		built *experiment.Built
		want  map[string]string // trial id -> the recorded id it is paired with
	}{
		{"one trial, name empty", []runs.TrialRow{row("a", "a")}, built(experiment.Trial{ID: "a"}), map[string]string{"a": "a"}},
		{"by id, names alike", []runs.TrialRow{row("a", "x"), row("b", "x")},
			built(experiment.Trial{ID: "b", Name: "x"}, experiment.Trial{ID: "a", Name: "x"}), map[string]string{"a": "a", "b": "b"}},
		{"ids changed: by name", []runs.TrialRow{row("a", "seed=1"), row("b", "seed=2")},
			built(experiment.Trial{ID: "c", Name: "seed=2"}, experiment.Trial{ID: "d", Name: "seed=1"}), map[string]string{"c": "b", "d": "a"}},
		{"ids changed: the only trial", []runs.TrialRow{row("a", "a")}, built(experiment.Trial{ID: "b"}), map[string]string{"b": "a"}},
		{"unknown trial of several", []runs.TrialRow{row("a", "a"), row("b", "b")}, built(experiment.Trial{ID: "c"}), map[string]string{}},
	} {
		got := recordedTrials(c.rows, c.built)
		for _, tn := range c.built.Trials {
			id := tn.Trial.ID
			r, ok := got[id]
			want, wok := c.want[id]
			if ok != wok || ok && r.ID != want {
				t.Errorf("%s: trial %s paired with %q (%v), want %q (%v)", c.name, id, r.ID, ok, want, wok)
			}
		}
	}
}
