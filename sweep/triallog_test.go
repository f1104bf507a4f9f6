package sweep

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/runs"
	_ "goldstone/stages/artificial"
)

// Round 3, item 9: what a trial's stages log and the errors they end with
// may quote data (a field, a header, an id); the trial's log file shows
// their control characters as escapes (\x1b), never as raw bytes.
func TestTrialLogEscapesControlCharacters(t *testing.T) {
	ctx := context.Background()
	c, err := experiment.ParseConfig("t.toml", []byte("[experiments.a]\npipeline = \"artificial\"\n[experiments.a.settings]\nsteps = 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Experiments["a"]
	built, err := experiment.Build(ctx, e, e.Trials(), experiment.Env{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := runs.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.CreateRun(ctx, runs.RunInfo{Experiment: "a"})
	if err != nil {
		t.Fatal(err)
	}
	tn := built.Trials[0]
	if err := st.UpsertTrial(ctx, runs.Trial{RunID: run, ID: tn.Trial.ID, Status: runs.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	r := &recorder{st: st, run: run, built: built, log: slog.New(slog.DiscardHandler),
		logs: &trialLogs{dir: filepath.Join(dir, "logs"), files: map[string]*os.File{}}}
	node := tn.Nodes[0]
	r.logTrial(ctx, pipeline.Event{Kind: pipeline.Log, Node: node, Msg: "field \x1b[31mred\x1b]0;title\x07\tand\u202e"})
	r.logTrial(ctx, pipeline.Event{Kind: pipeline.Failed, Node: node, Err: errors.New("bad \x1b[2J\r\xff")})
	r.logs.close()
	b, err := os.ReadFile(filepath.Join(dir, "logs", tn.Trial.ID+".log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`field \x1b[31mred\x1b]0;title\a` + "\t" + `and\u202e`, `bad \x1b[2J\r\xff`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("the trial log does not show %q: %q", w, b)
		}
	}
	if strings.ContainsAny(string(b), "\x1b\x07\r\u202e") {
		t.Errorf("the trial log holds control characters: %q", b)
	}
}
