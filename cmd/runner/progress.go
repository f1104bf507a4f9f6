package main

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"goldstone/pipeline"
)

// progress shows what a run is doing: on a terminal a live status line
// (trials ended of total, current step of the running stages, ETA), redrawn
// every half second and cut to the terminal's width; otherwise (and always
// with --log-format json, which prints JSON only) log lines as stages start
// and finish, carrying the run id, the node and its trial.
type progress struct {
	mu          sync.Mutex
	g           *globalOptions
	log         *slog.Logger
	w           io.Writer
	tty         bool
	total       int // trials
	finished    int // trials that ended (done, cached or failed)
	interrupted int // trials stopped before they ended
	start       time.Time
	running     map[string][2]int64           // node -> (count, total)
	values      map[string]map[string]float64 // node -> latest values of its progress events (loss)
	last        time.Time
	closed      bool
	lineLen     int
	trialOf     func(node string) (id, name string, ok bool)
	stop        chan struct{}
}

func newProgress(g *globalOptions, trials int) *progress {
	p := &progress{g: g, log: g.log, w: g.stderr, total: trials, start: time.Now(), running: map[string][2]int64{}, values: map[string]map[string]float64{}}
	if f, ok := g.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !g.quiet && g.logFormat != "json" {
		p.tty = true
		p.stop = make(chan struct{})
		go p.tick()
	}
	return p
}

// tick redraws the status line on a timer, so that elapsed time and ETA
// move while no event comes.
func (p *progress) tick() {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if !p.closed {
				p.draw()
			}
			p.mu.Unlock()
		}
	}
}

// RunStarted records the run id and the trial lookup (sweep.RunObserver):
// from now on every log line carries the run id, and node lines their trial.
func (p *progress) RunStarted(runID int64, trials int, trialOf func(node string) (string, string, bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = trials
	p.log = p.g.log.With("run", runID)
	p.trialOf = trialOf
}

// nodeAttrs are the attributes of a node's log line: the node, and its
// trial's id and name when it belongs to one.
func (p *progress) nodeAttrs(node string, kv ...any) []any {
	out := []any{"node", node}
	if p.trialOf != nil {
		if id, name, ok := p.trialOf(node); ok {
			out = append(out, "trial", id, "trial_name", name)
		}
	}
	return append(out, kv...)
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
			p.log.Info("stage started", p.nodeAttrs(ev.Node)...)
		}
	case pipeline.Progress:
		prev := p.running[ev.Node]
		p.running[ev.Node] = [2]int64{ev.Count, ev.Total}
		if ev.Values != nil {
			p.values[ev.Node] = ev.Values
		}
		if !p.tty && ev.Total > 0 && (ev.Count*10/ev.Total) != (prev[0]*10/max(1, ev.Total)) {
			kv := []any{"step", ev.Count, "of", ev.Total}
			for _, k := range slices.Sorted(maps.Keys(ev.Values)) {
				kv = append(kv, k, ev.Values[k])
			}
			p.log.Info("progress", p.nodeAttrs(ev.Node, kv...)...)
		}
	case pipeline.Done, pipeline.Cached, pipeline.Failed, pipeline.Skipped:
		delete(p.running, ev.Node)
		delete(p.values, ev.Node)
		if !p.tty {
			switch ev.Kind {
			case pipeline.Done:
				p.log.Info("stage done", p.nodeAttrs(ev.Node, "seconds", ev.Elapsed.Seconds())...)
			case pipeline.Cached:
				p.log.Info("stage cached", p.nodeAttrs(ev.Node)...)
			case pipeline.Skipped:
				// Info, not Warn: the cause (a failed trial or data
				// stage) is reported on its own, once.
				p.log.Info("stage skipped", p.nodeAttrs(ev.Node, "reason", ev.Reason)...)
			}
		}
	case pipeline.Log:
		if !p.tty {
			p.log.Info(ev.Msg, p.nodeAttrs(ev.Node)...)
		}
	}
	if p.tty && (time.Since(p.last) > 200*time.Millisecond || ev.Kind != pipeline.Progress) {
		p.last = time.Now()
		p.draw()
	}
}

// TrialFinished counts a trial that ended (sweep.TrialObserver); an
// interrupted trial did not end and is counted apart, so an interrupted
// run never shows all its trials finished.
func (p *progress) TrialFinished(trial, status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if status == "interrupted" {
		p.interrupted++
	} else {
		p.finished++
	}
	if !p.tty {
		p.log.Info("trial finished", "trial", trial, "status", status, "finished", p.finished, "of", p.total)
	} else if !p.closed {
		p.draw()
	}
}

func (p *progress) draw() {
	var parts []string
	nodes := slices.Sorted(maps.Keys(p.running))
	var frac float64
	for _, n := range nodes {
		c := p.running[n]
		if c[1] > 0 {
			part := fmt.Sprintf("%s %d/%d", p.shortName(n), c[0], c[1])
			if v, ok := p.values[n]["loss"]; ok {
				part += " loss=" + strconv.FormatFloat(v, 'g', 4, 64)
			}
			parts = append(parts, part)
			frac += float64(c[0]) / float64(c[1])
		} else {
			parts = append(parts, p.shortName(n))
		}
	}
	el := time.Since(p.start)
	eta := "?"
	if done := float64(p.finished) + frac; done > 0 && p.total > 0 {
		rem := time.Duration(float64(el) * (float64(p.total) - done) / done)
		eta = rem.Round(time.Second).String()
	}
	trials := fmt.Sprintf("trials %d/%d", p.finished, p.total)
	if p.interrupted > 0 {
		trials += fmt.Sprintf(" (%d interrupted)", p.interrupted)
	}
	line := fmt.Sprintf("%s  elapsed %s  eta %s  %s", trials, el.Round(time.Second), eta, strings.Join(parts, "  "))
	width := 80
	if f, ok := p.w.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 10 {
			width = w
		}
	}
	line = fitWidth(line, width-1)
	n := utf8.RuneCountInString(line)
	pad := ""
	if d := p.lineLen - n; d > 0 {
		pad = strings.Repeat(" ", d)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.lineLen = n
}

// Close ends the status line.
func (p *progress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.stop != nil {
		close(p.stop)
	}
	if p.tty && p.lineLen > 0 {
		fmt.Fprintln(p.w)
	}
}

// fitWidth cuts line to at most width runes, ending it with "…" when cut.
func fitWidth(line string, width int) string {
	if width < 1 || utf8.RuneCountInString(line) <= width {
		return line
	}
	r := []rune(line)
	return string(r[:width-1]) + "…"
}

// shortName names a running node on the status line: its trial's name when
// it belongs to one ("goldstone seed=2"), else the node id.
func (p *progress) shortName(node string) string {
	if p.trialOf != nil {
		if _, name, ok := p.trialOf(node); ok {
			return termText(name)
		}
	}
	return termText(node)
}
