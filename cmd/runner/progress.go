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
// (trials ended of total, current step of the running stages with the
// chosen metric, ETA), redrawn every half second and fitted to the
// terminal's width trial by trial (fitTrials), cleared before every log
// line and at the end; otherwise (and always with --log-format json, which
// prints JSON only) log lines as stages start and finish, carrying the run
// id, the node and its trial.
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
	metric      string // the value shown per trial (--progress-metric; "" is loss)
}

// newProgress starts the display of a run of trials showing metric per
// trial ("" is the loss). On a terminal it takes over g.log: log lines go
// through it, so that each clears the status line first.
func newProgress(g *globalOptions, trials int, metric string) *progress {
	p := &progress{g: g, log: g.log, w: g.stderr, total: trials, start: time.Now(), running: map[string][2]int64{}, values: map[string]map[string]float64{}, metric: metric}
	if f, ok := g.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && !g.quiet && g.logFormat != "json" {
		p.tty = true
		g.log = slog.New(slog.NewTextHandler(&statusWriter{p: p, w: g.stderr}, &slog.HandlerOptions{Level: slog.LevelInfo}))
		p.log = g.log
		p.stop = make(chan struct{})
		go p.tick()
	}
	return p
}

// statusWriter is the terminal's stderr while a status line is shown: a
// write first clears the line (the next tick draws it again below), so a
// log line never shares its row.
type statusWriter struct {
	p *progress
	w io.Writer
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.p.clear()
	return s.w.Write(b)
}

// clear erases the status line (the caller holds mu).
func (p *progress) clear() {
	if p.lineLen > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.lineLen = 0
	}
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

// parts are the running trials, in node order, with the chosen metric.
func (p *progress) parts() []trialPart {
	var parts []trialPart
	metric := p.metric
	if metric == "" {
		metric = "loss"
	}
	for _, n := range slices.Sorted(maps.Keys(p.running)) {
		c := p.running[n]
		tp := trialPart{name: p.shortName(n), step: c[0], total: c[1], metric: metric}
		tp.value, tp.has = p.values[n][metric]
		parts = append(parts, tp)
	}
	return parts
}

func (p *progress) draw() {
	parts := p.parts()
	var frac float64
	for _, tp := range parts {
		if tp.total > 0 {
			frac += float64(tp.step) / float64(tp.total)
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
	width := 80
	if f, ok := p.w.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 10 {
			width = w
		}
	}
	head := fmt.Sprintf("%s  elapsed %s  eta %s", trials, el.Round(time.Second), eta)
	line := fitWidth(fitTrials(head, parts, width-1), width-1)
	n := utf8.RuneCountInString(line)
	pad := ""
	if d := p.lineLen - n; d > 0 {
		pad = strings.Repeat(" ", d)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.lineLen = n
}

// Close ends the status line: it is cleared, so that what follows (the
// run's outcome) starts on an empty row.
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
	if p.tty {
		p.clear()
	}
}

// trialPart is a running trial on the status line.
type trialPart struct {
	name        string
	step, total int64
	metric      string
	value       float64
	has         bool
}

// text renders the part at a level of detail: 0 "goldstone lr=0.5 seed=1
// 1581/4000 valid_ll=-0.5983", 1 the step as a percentage and the value
// with 3 digits, 2 the name abbreviated (each word of the variant cut to 4
// letters, setting names to their first letter) and the value alone.
func (t trialPart) text(level int) string {
	name := t.name
	if level >= 2 {
		name = abbreviate(name)
	}
	if t.total <= 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	switch level {
	case 0:
		fmt.Fprintf(&b, " %d/%d", t.step, t.total)
	default:
		fmt.Fprintf(&b, " %d%%", t.step*100/t.total)
	}
	if t.has {
		switch level {
		case 0:
			b.WriteString(" " + t.metric + "=" + strconv.FormatFloat(t.value, 'g', 4, 64))
		case 1:
			b.WriteString(" " + t.metric + "=" + strconv.FormatFloat(t.value, 'g', 3, 64))
		default:
			b.WriteString(" " + strconv.FormatFloat(t.value, 'g', 3, 64))
		}
	}
	return b.String()
}

// abbreviate shortens a trial name: a word of the variant to 4 letters and
// a grid setting "lambda=10" to "l=10".
func abbreviate(name string) string {
	fields := strings.Fields(name)
	for i, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			r := []rune(k)
			fields[i] = string(r[:min(1, len(r))]) + "=" + v
			continue
		}
		var parts []string
		for _, w := range strings.Split(f, "-") {
			r := []rune(w)
			parts = append(parts, string(r[:min(4, len(r))]))
		}
		fields[i] = strings.Join(parts, "-")
	}
	return strings.Join(fields, " ")
}

// fitTrials joins the head and the running trials into a line of at most
// width runes, never cutting a trial: at the most detailed level at which
// every trial fits; else at the shortest, as many trials as fit and
// "+N more".
func fitTrials(head string, parts []trialPart, width int) string {
	for level := 0; level <= 2; level++ {
		line := head
		for _, t := range parts {
			line += "  " + t.text(level)
		}
		if utf8.RuneCountInString(line) <= width {
			return line
		}
	}
	line := head
	for i, t := range parts {
		more := fmt.Sprintf("  +%d more", len(parts)-i)
		next := line + "  " + t.text(2)
		rest := ""
		if i < len(parts)-1 {
			rest = fmt.Sprintf("  +%d more", len(parts)-i-1)
		}
		if utf8.RuneCountInString(next+rest) > width {
			return line + more
		}
		line = next
	}
	return line
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
