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
	p := newProgress(g, 1, "")
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

// TestProgressLineFitsPerTrial (issue 21, item 8): the chosen metric is
// shown per trial; when the line is too long for the terminal each trial
// is abbreviated, never cut, and what does not fit is counted; a log line
// clears the status line first, and Close clears it.
func TestProgressLineFitsPerTrial(t *testing.T) {
	var buf bytes.Buffer
	g := &globalOptions{stderr: &buf, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	p := &progress{g: g, log: g.log, w: &buf, tty: true, total: 8, start: time.Now(), running: map[string][2]int64{}, values: map[string]map[string]float64{}, metric: "valid_ll"}
	p.RunStarted(7, 8, trialOfTest)
	for _, n := range []string{"train/goldstone-linear,lambda=10,seed=1", "train/procrustes,lambda=10,seed=2", "train/goldstone-so,lambda=100,seed=3"} {
		p.Event(pipeline.Event{Kind: pipeline.Started, Node: n})
		p.Event(pipeline.Event{Kind: pipeline.Progress, Node: n, Count: 1581, Total: 4000, Values: map[string]float64{"loss": 76.23, "valid_ll": -0.598312}})
	}
	line := func() string {
		buf.Reset()
		p.draw()
		s := buf.String()
		if i := strings.LastIndex(s, "\r"); i >= 0 {
			s = s[i+1:]
		}
		return strings.TrimRight(s, " ")
	}
	// 80 columns (no terminal): every trial abbreviated, none cut in the
	// middle, the ones that do not fit counted.
	if got := line(); !strings.Contains(got, "  gold-line l=10 s=1 39% -0.598  +2 more") || strings.Contains(got, "…") || strings.Contains(got, "loss") {
		t.Errorf("80 columns: %q", got)
	}
	head := "trials 0/8  elapsed 3s  eta 5s"
	got := fitTrials(head, p.parts(), 250)
	for _, want := range []string{"  goldstone-linear lambda=10 seed=1 1581/4000 valid_ll=-0.5983", "  procrustes lambda=10 seed=2 1581/4000 valid_ll=-0.5983"} {
		if !strings.Contains(got, want) {
			t.Errorf("250 columns: %q lacks %q", got, want)
		}
	}
	if got := fitTrials(head, p.parts(), 200); !strings.Contains(got, "goldstone-linear lambda=10 seed=1 39% valid_ll=-0.598  goldstone-so") {
		t.Errorf("200 columns: %q", got)
	}
	if got := fitTrials(head, p.parts(), 50); got != head+"  +3 more" {
		t.Errorf("50 columns: %q", got)
	}
	// A log line clears the status line first; Close clears it.
	w := &statusWriter{p: p, w: &buf}
	p.draw()
	buf.Reset()
	w.Write([]byte("time=... msg=\"run ended\"\n"))
	if !strings.HasPrefix(buf.String(), "\r\x1b[K") {
		t.Errorf("a log line does not clear the status line: %q", buf.String())
	}
	p.draw()
	buf.Reset()
	p.Close()
	if buf.String() != "\r\x1b[K" {
		t.Errorf("Close wrote %q, want the line cleared", buf.String())
	}
}
