package experiment

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"goldstone/experiment/settings"
	"goldstone/search"
)

// Pruners are the names a search's pruner key takes ("none": no pruning).
var Pruners = []string{"asha", "successive_halving", "hyperband", "median", "none"}

// Pruning is a search's pruner: its points are trained to rungs of a
// budget in steps (MaxSteps/Eta^k, rounded down, for every k that leaves
// at least MinSteps: 300, 100, 33 for MaxSteps 300, Eta 3, MinSteps 30),
// and only the best go on from their checkpoint to the next rung (see
// sweep.Search). MaxSteps is the trials' steps setting.
type Pruning struct {
	Pruner   string `json:"pruner"`    // asha, successive_halving, hyperband, median
	MinSteps int    `json:"min_steps"` // the first rung
	Eta      int    `json:"eta"`       // the reduction factor: the best 1/Eta of a rung go on
	MaxSteps int    `json:"max_steps"` // the last rung: the trials' steps
	Brackets int    `json:"brackets"`  // hyperband: the brackets (each starting one rung later); else 1
}

// Rungs are the steps of the rungs, increasing, the last MaxSteps.
func (p *Pruning) Rungs() []int {
	r := []int{p.MaxSteps}
	for d := p.Eta; p.MaxSteps/d >= p.MinSteps && p.MaxSteps/d > 0; d *= p.Eta {
		r = append(r, p.MaxSteps/d)
	}
	slices.Reverse(r)
	return r
}

// String describes the pruner for plan.
func (p *Pruning) String() string {
	var rs []string
	for _, r := range p.Rungs() {
		rs = append(rs, fmt.Sprint(r))
	}
	s := fmt.Sprintf("pruner %s, eta %d, rungs at steps %s", p.Pruner, p.Eta, strings.Join(rs, ", "))
	if p.Pruner == "hyperband" {
		s += fmt.Sprintf(", %d brackets", p.Brackets)
	}
	return s
}

// Unreached says why ASHA over trials points cannot bring any point to the
// last rung, "" when it can. ASHA promotes the best floor(n/Eta) of the n
// points with a result at a rung, so rung k holds at most
// floor(trials/Eta^k) points and the last (the full budget) needs
// trials >= Eta^(rungs-1); the other pruners always bring some point there.
func (p *Pruning) Unreached(trials int) string {
	if p.Pruner != "asha" || trials <= 0 {
		return ""
	}
	rs := p.Rungs()
	need := 1
	for range len(rs) - 1 {
		need *= p.Eta
	}
	if trials >= need {
		return ""
	}
	k, pow := 0, 1 // the deepest rung trials points reach, and Eta^k
	for pow*p.Eta <= trials {
		k, pow = k+1, pow*p.Eta
	}
	return fmt.Sprintf("asha over %d points with eta %d reaches at most rung %d of %d (%d steps): no point would train to the trials' %d steps, and the search would choose nothing; use trials >= %d, min_steps >= %d or fewer steps",
		trials, p.Eta, k, len(rs)-1, rs[k], p.MaxSteps, need, p.MaxSteps/pow)
}

// pruningConfig checks a search's pruner keys against the experiment (its
// steps must be one value: not in the grid, a variant or the space).
func (c *Config) pruningConfig(path string, r *rawSearch, e *Experiment) (*Pruning, error) {
	known := false
	for _, n := range Pruners {
		known = known || r.Pruner == n
	}
	if !known {
		return nil, c.errorf(path+".pruner", "%q: want one of %s", r.Pruner, strings.Join(Pruners, ", "))
	}
	if r.Pruner == "none" {
		if r.MinSteps != 0 || r.Eta != 0 || r.MaxSteps != 0 || r.Brackets != 0 {
			return nil, c.errorf(path+".pruner", "\"none\" takes no min_steps, eta, max_steps or brackets")
		}
		return nil, nil
	}
	steps, ok := budgetOf(e)
	if !ok {
		return nil, c.errorf(path+".pruner", "pipeline %s has no steps setting to prune on", e.Pipeline)
	}
	if err := searchedElsewhere("steps", e); err != nil {
		return nil, c.errorf(path+".pruner", "the pruner's budget is the steps setting, which must be one value: %v", err)
	}
	for _, p := range r.Space {
		if p.When != nil {
			if _, ok := p.When["steps"]; ok {
				return nil, c.errorf(path+".pruner", "the pruner's budget is the steps setting: no condition may name it")
			}
		}
	}
	if _, ok := r.Space["steps"]; ok {
		return nil, c.errorf(path+".space.steps", "the pruner's budget is the steps setting: it cannot be searched")
	}
	p := &Pruning{Pruner: r.Pruner, MinSteps: r.MinSteps, Eta: r.Eta, MaxSteps: int(steps), Brackets: r.Brackets}
	if p.Eta == 0 {
		p.Eta = 3
	}
	switch {
	case p.Eta < 2:
		return nil, c.errorf(path+".eta", "must be >= 2 (the best 1/eta of a rung go on), got %d", r.Eta)
	case r.MinSteps <= 0:
		return nil, c.errorf(path+".min_steps", "want the first rung's steps, > 0; got %d", r.MinSteps)
	case r.MaxSteps != 0 && int64(r.MaxSteps) != steps:
		return nil, c.errorf(path+".max_steps", "%d is not the trials' steps (%d): the last rung is the full trial; set steps instead", r.MaxSteps, steps)
	case int64(r.MinSteps) > steps:
		return nil, c.errorf(path+".min_steps", "%d is more than max_steps (the trials' steps, %d)", r.MinSteps, steps)
	case r.Brackets != 0 && r.Pruner != "hyperband":
		return nil, c.errorf(path+".brackets", "only hyperband has brackets")
	case r.Brackets < 0:
		return nil, c.errorf(path+".brackets", "must be >= 1, got %d", r.Brackets)
	}
	if p.Brackets == 0 {
		p.Brackets = 1
		if r.Pruner == "hyperband" {
			p.Brackets = len(p.Rungs())
		}
	}
	if n := len(p.Rungs()); p.Brackets > n {
		return nil, c.errorf(path+".brackets", "%d brackets for %d rungs: each bracket starts one rung later, so at most %d", p.Brackets, n, n)
	}
	if r.Trials > 0 && r.Trials < p.Brackets {
		return nil, c.errorf(path+".brackets", "%d brackets for %d trials: each bracket needs a point", p.Brackets, r.Trials)
	}
	return p, nil
}

// RungJob is a point of a pruned search (its suggestion index) trained to
// one of the pruner's rungs (an index of Rungs).
type RungJob struct{ Point, Rung int }

// RungVariant names the variant of a point's trials at a rung short of the
// last: "s3@100" (s3's trials to step 100), "s3/gd@100"; at the last rung
// the point's own name (PointVariant), as in a search without a pruner.
func (p *Pruning) RungVariant(index int, v string, rung int) string {
	rs := p.Rungs()
	if rung == len(rs)-1 {
		return PointVariant(index, v)
	}
	return fmt.Sprintf("%s@%d", PointVariant(index, v), rs[rung])
}

// PrunedWave is Wave for a pruned search: the trials of the jobs, each its
// point's settings with steps at the job's rung (RungVariant).
func (e *Experiment) PrunedWave(points []search.Point, jobs []RungJob) (*Experiment, error) {
	p := e.Search.Pruning
	rs := p.Rungs()
	all, err := e.Wave(0, points)
	if err != nil {
		return nil, err
	}
	base := e.baseVariants()
	w := *all
	w.Variants = nil
	for _, j := range jobs {
		for k, v := range base {
			pv := all.Variants[j.Point*len(base)+k]
			nv := Variant{Name: p.RungVariant(j.Point, v.Name, j.Rung), Settings: maps.Clone(pv.Settings)}
			nv.Settings["steps"] = int64(rs[j.Rung])
			w.Variants = append(w.Variants, nv)
		}
	}
	return &w, nil
}

// PruneStatus is what became of a point's trials at the rung where a pruned
// search stopped it (sweep.Search records it with the trials).
type PruneStatus struct {
	Rung int // index of Rungs
	Step int // the rung's steps
}

// overridePruning follows a --set of steps: the pruner's last rung is the
// trials' steps, which must stay one value of at least min_steps.
func (e *Experiment) overridePruning() error {
	if e.Search == nil || e.Search.Pruning == nil {
		return nil
	}
	for _, ax := range e.Grid {
		if ax.Key == "steps" {
			return &ConfigError{File: "--set", Key: "steps", Err: errors.New("a pruned search's budget is the steps setting: one value, not a grid")}
		}
	}
	steps, _ := budgetOf(e)
	p := *e.Search.Pruning
	key := "search.trials" // the steps unchanged: a --set search.trials
	if int(steps) != p.MaxSteps {
		key = "steps"
		if steps < int64(p.MinSteps) {
			return &ConfigError{File: "--set", Key: "steps", Err: fmt.Errorf("%d is less than the pruner's min_steps (%d)", steps, p.MinSteps)}
		}
		p.MaxSteps = int(steps)
		if n := len(p.Rungs()); p.Brackets > n {
			return &ConfigError{File: "--set", Key: "steps", Err: fmt.Errorf("%d steps give %d rungs, fewer than hyperband's %d brackets", steps, n, p.Brackets)}
		}
	}
	if why := p.Unreached(e.Search.Trials); why != "" {
		return &ConfigError{File: "--set", Key: key, Err: errors.New(why)}
	}
	s := *e.Search
	s.Pruning = &p
	e.Search = &s
	return nil
}

// budget is the setting a pruner prunes on: a training stage's steps.
type budget struct {
	Steps int `set:"steps" default:"1" doc:"the trials' steps"`
}

// budgetOf is the experiment's steps, when its pipeline has the setting.
func budgetOf(e *Experiment) (int64, bool) {
	if _, ok := specOf(e.Pipeline, "steps"); !ok {
		return 0, false
	}
	var b budget
	if err := settings.Decode(e.Settings, &b); err != nil {
		return 0, false
	}
	return int64(b.Steps), true
}
