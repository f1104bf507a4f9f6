package serve

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"goldstone/internal/safetext"
	"goldstone/runs"
)

// RunView is a run as the pages and /api/runs show it.
type RunView struct {
	ID         int64          `json:"id"`
	Experiment string         `json:"experiment"`
	Kind       string         `json:"kind"`
	Status     string         `json:"status"`
	Owner      string         `json:"owner,omitempty"` // the owner's liveness while running
	Started    string         `json:"started"`
	Duration   string         `json:"duration"`
	Trials     int            `json:"trials"`
	Counts     map[string]int `json:"counts"` // trial status -> count
	CountText  string         `json:"-"`
	Note       string         `json:"note,omitempty"`
	Report     string         `json:"report,omitempty"` // URL of the static report
}

// RunsPage is the runs list.
type RunsPage struct {
	Runs  []RunView `json:"runs"`
	Live  bool      `json:"live"` // some run is running
	Index string    `json:"index,omitempty"`
	Every int64     `json:"-"`
}

// TrialView is one trial of a run page.
type TrialView struct {
	Seq     int64              `json:"seq"`
	ID      string             `json:"id"`
	Name    string             `json:"name"`
	Status  string             `json:"status"`
	Error   string             `json:"error,omitempty"`
	Step    *int               `json:"step"` // the latest recorded series step; null before the first
	Metrics []string           `json:"-"`    // the headline metrics' values, as text
	Summary map[string]float64 `json:"summary,omitempty"`
}

// RunPage is one run: its trials, curves and aggregates.
type RunPage struct {
	Run        RunView     `json:"run"`
	Live       bool        `json:"live"`
	Headlines  []string    `json:"headlines"`
	Trials     []TrialView `json:"trials"`
	Curves     []Curve     `json:"-"`
	Aggregates []AggView   `json:"-"`
	Series     []string    `json:"series"`
	Every      int64       `json:"-"`
	Index      string      `json:"-"`
	Compare    []RunView   `json:"-"` // the other runs of the experiment, to compare with
}

func (s *Server) view(r *runs.RunListing, now time.Time) RunView {
	v := RunView{ID: r.ID, Experiment: r.Experiment, Kind: r.Kind, Status: r.Status, Trials: r.Trials,
		Counts: r.Counts, Note: r.Note, Report: s.reportURL(r.Experiment, r.ID)}
	if !r.Started.IsZero() {
		v.Started = r.Started.Format("2006-01-02 15:04:05Z")
		v.Duration = r.Duration(now).Round(time.Second).String()
	}
	if r.Status == runs.StatusRunning {
		switch r.Owner().Liveness() {
		case runs.OwnerAlive:
			v.Owner = fmt.Sprintf("alive (pid %d)", r.PID)
		case runs.OwnerGone:
			v.Owner = "gone: its runner exited (stale; a rerun resumes it)"
		default:
			v.Owner = "on host " + r.Host + " (not checked from here)"
		}
	}
	var parts []string
	for _, st := range []string{runs.StatusDone, runs.StatusCached, runs.StatusRunning, runs.StatusPending, runs.StatusDiverged, runs.StatusPruned, runs.StatusFailed, runs.StatusInterrupted} {
		if n := r.Counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	v.CountText = strings.Join(parts, ", ")
	return v
}

func (s *Server) runsData(ctx context.Context, _ *http.Request) (any, error) {
	ls, err := s.st.ListRuns(ctx, runs.RunFilter{})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	p := &RunsPage{Runs: []RunView{}, Index: s.indexURL(), Every: s.opt.Every.Milliseconds()}
	for i := len(ls) - 1; i >= 0; i-- { // newest first
		p.Runs = append(p.Runs, s.view(&ls[i], now))
		p.Live = p.Live || ls[i].Status == runs.StatusRunning
	}
	return p, nil
}

// listing returns run id's listing.
func (s *Server) listing(ctx context.Context, id int64) (*runs.RunListing, []runs.RunListing, error) {
	info, err := s.st.Run(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ls, err := s.st.ListRuns(ctx, runs.RunFilter{Experiment: info.Experiment})
	if err != nil {
		return nil, nil, err
	}
	for i := range ls {
		if ls[i].ID == id {
			return &ls[i], ls, nil
		}
	}
	return nil, nil, fmt.Errorf("run %d: %w", id, runs.ErrNotFound)
}

func (s *Server) runData(ctx context.Context, r *http.Request) (any, error) {
	id, err := runID(r, "id")
	if err != nil {
		return nil, err
	}
	l, all, err := s.listing(ctx, id)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	p := &RunPage{Run: s.view(l, now), Live: l.Status == runs.StatusRunning, Every: s.opt.Every.Milliseconds(),
		Index: s.indexURL(), Headlines: []string{}}
	for i := range all {
		if all[i].ID != id {
			p.Compare = append(p.Compare, s.view(&all[i], now))
		}
	}
	trials, err := s.st.TrialTable(ctx, id)
	if err != nil {
		return nil, err
	}
	var heads []runs.Headline
	if s.opt.Headline != nil {
		heads = s.opt.Headline(l.ConfigJSON)
	}
	for _, h := range heads {
		p.Headlines = append(p.Headlines, h.Metric)
	}
	steps, err := s.latestSteps(ctx, id)
	if err != nil {
		return nil, err
	}
	p.Trials = trialViews(trials, heads, steps)
	series, err := s.st.RunSeries(ctx, id)
	if err != nil {
		return nil, err
	}
	p.Series, p.Curves = curves(trials, series)
	p.Aggregates = aggViews(runs.Aggregates(trials, heads))
	return p, nil
}

// latestSteps is each trial's latest recorded series step.
func (s *Server) latestSteps(ctx context.Context, id int64) (map[string]int, error) {
	rows, err := s.st.DB().QueryContext(ctx, `SELECT trial, MAX(step) FROM metrics WHERE run_id = ? GROUP BY trial`, id)
	if err != nil {
		return nil, fmt.Errorf("latest steps of run %d: %w", id, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			trial string
			step  int
		)
		if err := rows.Scan(&trial, &step); err != nil {
			return nil, fmt.Errorf("latest steps of run %d: %w", id, err)
		}
		out[trial] = step
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest steps of run %d: %w", id, err)
	}
	return out, nil
}

func trialViews(trials []runs.TrialRow, heads []runs.Headline, steps map[string]int) []TrialView {
	out := make([]TrialView, 0, len(trials))
	for _, t := range trials {
		v := TrialView{Seq: t.Seq, ID: t.ID, Name: t.Name, Status: t.Status, Error: cut(t.Error, 300), Summary: finite(t.Summary)}
		if st, ok := steps[t.ID]; ok {
			v.Step = &st
		}
		for _, h := range heads {
			x, ok := t.Summary[h.Metric]
			if !ok {
				v.Metrics = append(v.Metrics, "—")
				continue
			}
			v.Metrics = append(v.Metrics, num(x))
		}
		out = append(out, v)
	}
	return out
}

// finite drops the values JSON cannot carry (NaN, ±Inf: never and
// missing); the page shows them as text.
func finite(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// AggView is one row of the aggregates table.
type AggView struct {
	Metric, Variant, Settings, N, Mean, SD, Interval, Median string
	Best                                                     bool
}

func aggViews(aggs []runs.Aggregate) []AggView {
	var out []AggView
	for _, a := range aggs {
		for _, c := range a.Cells {
			var set []string
			for i, k := range a.Settings {
				set = append(set, k+"="+c.Settings[i])
			}
			v := AggView{Metric: a.Metric, Variant: c.Variant, Settings: strings.Join(set, ", "),
				N: strconv.Itoa(c.N), Mean: num(c.Mean), SD: num(c.SD), Median: num(c.Median), Best: c.Best}
			if c.Never > 0 {
				v.N += fmt.Sprintf(" (%d never)", c.Never)
			}
			if !math.IsNaN(c.Lo) {
				v.Interval = "[" + num(c.Lo) + ", " + num(c.Hi) + "]"
			}
			out = append(out, v)
		}
	}
	return out
}

// ComparePage is two runs side by side: the settings that differ and each
// run's aggregates.
type ComparePage struct {
	A, B     RunPage
	Settings []runs.SettingDiff
	Index    string
}

func (s *Server) compareData(ctx context.Context, r *http.Request) (any, error) {
	a, err := runID(r, "a")
	if err != nil {
		return nil, err
	}
	b, err := runID(r, "b")
	if err != nil {
		return nil, err
	}
	d, err := s.st.Diff(ctx, a, b)
	if err != nil {
		return nil, err
	}
	p := &ComparePage{Settings: d.Settings, Index: s.indexURL()}
	for i, id := range []int64{a, b} {
		q := r.Clone(ctx)
		q.SetPathValue("id", strconv.FormatInt(id, 10))
		rp, err := s.runData(ctx, q)
		if err != nil {
			return nil, err
		}
		*[]*RunPage{&p.A, &p.B}[i] = *rp.(*RunPage)
	}
	return p, nil
}

// num formats a value for a table: never (+Inf) as "never", NaN as "—".
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case math.IsInf(x, 1):
		return "never"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', 5, 64)
}

// oneLine is text from elsewhere on one line, its controls escaped.
func oneLine(s string) string {
	return strings.ReplaceAll(safetext.Escape(s), "\n", `\n`)
}

// cut shortens s to at most n bytes on a rune boundary, saying so.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func pathEscape(s string) string { return url.PathEscape(s) }

// sortedKeys is m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
