package experiment_test

import (
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/formats/ratings"
)

// A string setting tagged ints:"text" (a column by name or 1-based position) takes an
// integer in experiments.toml and on --set as its decimal text; other string settings
// still refuse integers.
func TestIntTextSetting(t *testing.T) {
	c, err := experiment.ParseConfig("t.toml", []byte("[experiments.a]\npipeline = \"movielens\"\n[experiments.a.settings]\nuser_column = 2\nitem_column = \"item\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["a"]
	if err := e.Override([]string{"time_column=4"}); err != nil {
		t.Fatal(err)
	}
	s := settings.MustDecode[ratings.TableSettings](e.Trials()[0].Settings)
	if s.User != "2" || s.Item != "item" || s.Time != "4" {
		t.Errorf("user_column %q, item_column %q, time_column %q", s.User, s.Item, s.Time)
	}
	_, err = experiment.ParseConfig("t.toml", []byte("[experiments.a]\npipeline = \"movielens\"\n[experiments.a.settings]\ndataset = 2\n"))
	if err == nil || !strings.Contains(err.Error(), "dataset") || !strings.Contains(err.Error(), "want string, got integer 2") {
		t.Errorf("dataset = 2: %v", err)
	}
}
