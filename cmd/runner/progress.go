package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"goldstone/pipeline"
)

// progress shows what a run is doing: on a terminal a live status line
// (stage, trials done of total, current step of the running stages, ETA);
// otherwise plain log lines as stages start and finish.
type progress struct {
	mu       sync.Mutex
	g        *globalOptions
	w        io.Writer
	tty      bool
	total    int // trials
	finished int // trial result nodes finished (done, cached or failed)
	start    time.Time
	running  map[string][2]int64 // node -> (count, total)
	last     time.Time
	closed   bool
	lineLen  int
}

func newProgress(g *globalOptions, trials int) *progress {
	p := &progress{g: g, w: g.stderr, total: trials, start: time.Now(), running: map[string][2]int64{}}
	if f, ok := g.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !g.quiet {
		p.tty = true
	}
	return p
}

func (p *progress) Event(ev pipeline.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	switch ev.Kind {
	case pipeline.Started:
		p.running[ev.Node] = [2]int64{0, 0}
		if !p.tty {
			p.g.log.Info("stage started", "node", ev.Node)
		}
	case pipeline.Progress:
		prev := p.running[ev.Node]
		p.running[ev.Node] = [2]int64{ev.Count, ev.Total}
		if !p.tty && ev.Total > 0 && (ev.Count*10/ev.Total) != (prev[0]*10/max(1, ev.Total)) {
			p.g.log.Info("progress", "node", ev.Node, "step", ev.Count, "of", ev.Total)
		}
	case pipeline.Done, pipeline.Cached, pipeline.Failed, pipeline.Skipped:
		delete(p.running, ev.Node)
		if !p.tty {
			switch ev.Kind {
			case pipeline.Done:
				p.g.log.Info("stage done", "node", ev.Node, "seconds", ev.Elapsed.Seconds())
			case pipeline.Cached:
				p.g.log.Info("stage cached", "node", ev.Node)
			case pipeline.Skipped:
				p.g.log.Warn("stage skipped", "node", ev.Node, "reason", ev.Reason)
			}
		}
	case pipeline.Log:
		if !p.tty {
			p.g.log.Info(ev.Msg, "node", ev.Node)
		}
	}
	if p.tty && (time.Since(p.last) > 200*time.Millisecond || ev.Kind != pipeline.Progress) {
		p.last = time.Now()
		p.draw()
	}
}

// TrialFinished counts a finished trial (stages.TrialObserver).
func (p *progress) TrialFinished(trial, status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	if !p.tty {
		p.g.log.Info("trial finished", "trial", trial, "status", status, "finished", p.finished, "of", p.total)
	} else if !p.closed {
		p.draw()
	}
}

func (p *progress) draw() {
	var parts []string
	nodes := make([]string, 0, len(p.running))
	for n := range p.running {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	var frac float64
	for _, n := range nodes {
		c := p.running[n]
		if c[1] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", n, c[0], c[1]))
			frac += float64(c[0]) / float64(c[1])
		} else {
			parts = append(parts, n)
		}
	}
	el := time.Since(p.start)
	eta := "?"
	if done := float64(p.finished) + frac; done > 0 && p.total > 0 {
		rem := time.Duration(float64(el) * (float64(p.total) - done) / done)
		eta = rem.Round(time.Second).String()
	}
	line := fmt.Sprintf("trials %d/%d  elapsed %s  eta %s  %s", p.finished, p.total, el.Round(time.Second), eta, strings.Join(parts, "  "))
	if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil && len(line) > w-1 && w > 10 {
		line = line[:w-1]
	}
	pad := ""
	if n := p.lineLen - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.lineLen = len(line)
}

// Close ends the status line.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.tty && p.lineLen > 0 {
		fmt.Fprintln(p.w)
	}
}
