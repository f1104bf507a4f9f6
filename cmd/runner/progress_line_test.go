package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"goldstone/pipeline"
)

func trialOfTest(node string) (string, string, bool) {
	if strings.HasPrefix(node, "train/") {
		return "id-" + node[6:], strings.ReplaceAll(node[6:], ",", " "), true
	}
	return "", "", false
}

// TestProgressLine: the status line names each running trial with its step
// and latest loss, counts interrupted trials apart, and fits the width.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	g := &globalOptions{stderr: &buf, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	p := &progress{g: g, log: g.log, w: &buf, tty: true, total: 4, start: time.Now(), running: map[string][2]int64{}, values: map[string]map[string]float64{}}
	p.RunStarted(7, 4, trialOfTest)
	p.Event(pipeline.Event{Kind: pipeline.Started, Node: "train/gd,seed=1"})
	p.Event(pipeline.Event{Kind: pipeline.Progress, Node: "train/gd,seed=1", Count: 120, Total: 400, Values: map[string]float64{"loss": 1.23456}})
	p.TrialFinished("x", "done")
	p.TrialFinished("y", "interrupted")
	buf.Reset()
	p.draw()
	line := buf.String()
	for _, want := range []string{"trials 1/4 (1 interrupted)", "gd seed=1 120/400 loss=1.235"} {
		if !strings.Contains(line, want) {
			t.Errorf("status line %q lacks %q", line, want)
		}
	}
	if n := len([]rune(strings.TrimPrefix(line, "\r"))); n > 79 {
		t.Errorf("status line of %d runes, want at most 79 (80 columns)", n)
	}
	p.Close()
}

// TestProgressJSONEvents: without a terminal, progress events are log
// lines with the run id, node, trial and the loss.
func TestProgressJSONEvents(t *testing.T) {
	var buf bytes.Buffer
	g := &globalOptions{stderr: &buf, logFormat: "json", log: slog.New(slog.NewJSONHandler(&buf, nil))}
	p := newProgress(g, 1)
	p.RunStarted(3, 1, trialOfTest)
	p.Event(pipeline.Event{Kind: pipeline.Progress, Node: "train/gd,seed=1", Count: 50, Total: 100, Values: map[string]float64{"loss": 2.5}})
	p.Close()
	var ev map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &ev); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if ev["run"] != float64(3) || ev["trial"] != "id-gd,seed=1" || ev["loss"] != 2.5 || ev["step"] != float64(50) {
		t.Errorf("progress event = %v", ev)
	}
}
