package experiment_test

import (
	"fmt"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/stages/artificial"
)

// TestOverrideUnquotedList: --set seed=1,2,3 (no brackets, which zsh would
// glob) is the grid seed=[1,2,3]; a list setting takes the list; a bare
// word list is a list of strings.
func TestOverrideUnquotedList(t *testing.T) {
	for _, tt := range []struct {
		set, key, want string
	}{
		{"seed=1,2,3", "seed", "[1 2 3]"},
		{"seed=[1,2,3]", "seed", "[1 2 3]"},
		{"lr=0.5, 1e-2", "lr", "[0.5 0.01]"},
		{"optimizer=adam,gd", "optimizer", "[adam gd]"},
	} {
		c, err := experiment.ParseConfig("x.toml", []byte(goodConfig))
		if err != nil {
			t.Fatal(err)
		}
		e := c.Experiments["small"]
		if err := e.Override([]string{tt.set}); err != nil {
			t.Fatalf("%s: %v", tt.set, err)
		}
		got := ""
		for _, ax := range e.Grid {
			if ax.Key == tt.key {
				got = fmt.Sprint(ax.Values)
			}
		}
		if got != tt.want {
			t.Errorf("%s: grid %s = %s, want %s", tt.set, tt.key, got, tt.want)
		}
	}
	c, _ := experiment.ParseConfig("x.toml", []byte(goodConfig))
	e := c.Experiments["small"]
	if err := e.Override([]string{"snapshots=0,100"}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(settings.MustDecode[artificial.TrainSettings](e.Settings).Snapshots); got != "[0 100]" {
		t.Errorf("list setting snapshots=0,100: %s", got)
	}
	if err := e.Override([]string{"seed=1,x"}); err == nil {
		t.Error("seed=1,x accepted")
	}
}
