package report_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/report"
	"goldstone/trialio"
)

// resultStage writes a trial's result directory, or fails.
type resultStage struct {
	Trial string
	Fail  string
}

func (*resultStage) Name() string    { return "result" }
func (*resultStage) Version() string { return "1" }
func (s *resultStage) Params() any   { return s }
func (s *resultStage) Run(_ context.Context, io *pipeline.IO) error {
	if s.Fail != "" {
		return errors.New(s.Fail)
	}
	dir := io.Output("result")
	ser := &trialio.Series{}
	ser.Add("loss", 0, 2)
	ser.Add("loss", 1, 1)
	if err := trialio.WriteTrialSeries(dir, ser); err != nil {
		return err
	}
	return trialio.WriteSummary(filepath.Join(dir, "summary.json"), trialio.Summary{"final_loss": 1, "wall_seconds": 0.5})
}

// TestReportScaffolding: the report stage loads the results of the trials
// that finished, hands them to Draw, writes its file (the summary table,
// then Draw's Markdown) and lists the failed trials with their errors.
func TestReportScaffolding(t *testing.T) {
	trials := []experiment.Trial{{ID: "aaa", Name: "seed=1", Variant: "gd"}, {ID: "bbb", Name: "seed=2", Variant: "gd"}}
	b := &experiment.Built{Graph: &pipeline.Graph{}}
	in := map[string]pipeline.Ref{}
	for i, tr := range trials {
		s := &resultStage{Trial: tr.ID}
		if i == 1 {
			s.Fail = "loss diverged | at step 3"
		}
		b.Add(&pipeline.Node{ID: "train/" + tr.ID, Stage: s, Outputs: []string{"result"}})
		in[tr.ID] = pipeline.Out("train/"+tr.ID, "result")
	}
	var drawn []report.TrialResult
	draw := func(_ context.Context, experiment string, results []report.TrialResult, _ *pipeline.IO, dir string) (string, error) {
		drawn = results
		return "\n## Drawn for " + experiment + "\n", os.WriteFile(filepath.Join(dir, "figure.png"), []byte("png"), 0o644)
	}
	report.Add(b, &experiment.Experiment{Name: "exp"}, trials, in, report.Def{Stage: "report-test", Version: "1", File: "report.md", Draw: draw})
	res, _ := pipeline.Run(context.Background(), b.Graph, pipeline.Options{WorkDir: t.TempDir(), Jobs: 1})
	if res == nil || res.Nodes[b.Report].Err != nil {
		t.Fatalf("report: %+v", res)
	}
	if len(drawn) != 1 || drawn[0].Trial.ID != "aaa" || drawn[0].Variant != "gd" || drawn[0].Summary["final_loss"] != 1 {
		t.Fatalf("Draw got %+v, want the finished trial's results", drawn)
	}
	dir := res.Nodes[b.Report].Outputs["figures"]
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# exp\n", "| aaa | seed=1 | 1 | 0.5 |", "## Drawn for exp", "## Failed trials (1)", `| seed=2 | loss diverged \| at step 3 |`} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.md")); err == nil {
		t.Error("summary.md written beside report.md")
	}
}
