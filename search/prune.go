package search

import (
	"math"
	"slices"
)

// Job is a point (its suggestion index) to be trained to a rung.
type Job struct{ Point, Rung int }

// PruneState is what a pruned search knows between waves: how many points
// were suggested, the jobs issued, and the objective each finished job
// recorded (signed: lower is better; +Inf for a failed or diverged one).
type PruneState struct {
	Points int
	Issued map[Job]bool
	Value  map[Job]float64
}

// Schedule is a pruner over Rungs rungs (the last the full budget): its
// Next is a pure function of the state, so a search stopped and resumed
// takes the same decisions.
//
//   - asha (asynchronous successive halving, Li et al. 2020) promotes a
//     point from rung k as soon as it is among the best floor(n/Eta) of
//     the n points that reached rung k, and fills the rest of a wave
//     with new points.
//   - successive_halving runs every point to the first rung, then the
//     best max(1, floor(n/Eta)) of them to the next, and so on.
//   - hyperband runs Brackets brackets of successive halving, bracket b
//     starting at rung b with fewer points (Li et al. 2018's allocation,
//     scaled to Trials points), side by side.
//   - median continues a point past rung k when its value is no worse
//     than the median of the values at rung k of the points suggested no
//     later than it (itself included).
type Schedule struct {
	Pruner   string
	Rungs    int
	Eta      int
	Brackets int
	Trials   int // points to suggest in all
	Wave     int // jobs at once
}

// Next returns the jobs of the next wave (at most Wave; none when the
// search is over) and how many of them are new points (indices Points,
// Points+1, ...).
func (s Schedule) Next(st *PruneState) (jobs []Job, newPoints int) {
	add := func(j Job) bool {
		if len(jobs) >= s.Wave {
			return false
		}
		jobs = append(jobs, j)
		if j.Point >= st.Points+newPoints {
			newPoints++
		}
		return true
	}
	switch s.Pruner {
	case "asha":
		s.asha(st, add)
	case "median":
		s.median(st, add)
	default:
		off := 0
		for b, n := range s.bracketSizes() {
			if !s.bracket(st, b, off, n, add) {
				break
			}
			off += n
		}
	}
	return jobs, newPoints
}

// best returns the points with a finite value at rung k, best first (ties
// by index).
func best(st *PruneState, pts []int, k int) []int {
	var out []int
	for _, i := range pts {
		if v, ok := st.Value[Job{i, k}]; ok && !math.IsInf(v, 0) && !math.IsNaN(v) {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		va, vb := st.Value[Job{a, k}], st.Value[Job{b, k}]
		switch {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		return 0
	})
	return out
}

func (s Schedule) asha(st *PruneState, add func(Job) bool) {
	all := make([]int, st.Points)
	for i := range all {
		all[i] = i
	}
	for k := s.Rungs - 2; k >= 0; k-- {
		n := 0
		for _, i := range all {
			if _, ok := st.Value[Job{i, k}]; ok {
				n++
			}
		}
		top := best(st, all, k)
		top = top[:min(len(top), n/s.Eta)]
		for _, i := range top {
			if j := (Job{i, k + 1}); !st.Issued[j] && !add(j) {
				return
			}
		}
	}
	for i := st.Points; i < s.Trials; i++ {
		if !add(Job{i, 0}) {
			return
		}
	}
}

func (s Schedule) median(st *PruneState, add func(Job) bool) {
	for i := range st.Points {
		k := s.Rungs - 1
		for k >= 0 && !st.Issued[Job{i, k}] {
			k--
		}
		v, ok := st.Value[Job{i, k}]
		if k < 0 || k == s.Rungs-1 || !ok || math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		var vals []float64
		for j := 0; j <= i; j++ {
			if w, ok := st.Value[Job{j, k}]; ok {
				vals = append(vals, w)
			}
		}
		if v <= medianOf(vals) && !add(Job{i, k + 1}) {
			return
		}
	}
	for i := st.Points; i < s.Trials; i++ {
		if !add(Job{i, 0}) {
			return
		}
	}
}

// medianOf is the median of vals (the mean of the middle two of an even
// count; +Inf values count as the largest).
func medianOf(vals []float64) float64 {
	v := slices.Clone(vals)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return float64(0.5*v[n/2-1]) + float64(0.5*v[n/2]) // no fused multiply-add: the same bits on every build
}

// bracketSizes splits Trials points over the brackets: bracket b (starting
// at rung b, S-b halvings, S = Rungs-1) in proportion to Hyperband's
// (S+1)/(S-b+1) eta^(S-b), at least one each; remainders to the first.
func (s Schedule) bracketSizes() []int {
	if s.Brackets <= 1 {
		return []int{s.Trials}
	}
	S := s.Rungs - 1
	w := make([]float64, s.Brackets)
	var sum float64
	for b := range w {
		pow := 1.0 // eta^(S-b), exact: integers far below 2^53
		for range S - b {
			pow *= float64(s.Eta)
		}
		// float64(...): the product rounded before the sum, so no fused
		// multiply-add (the same bits on every build).
		w[b] = float64(float64(S+1) / float64(S-b+1) * pow)
		sum += w[b]
	}
	n := make([]int, s.Brackets)
	left := s.Trials
	for b := range n {
		n[b] = max(1, int(float64(s.Trials)*w[b]/sum))
		left -= n[b]
	}
	for b := 0; left > 0; b = (b + 1) % len(n) {
		n[b]++
		left--
	}
	for left < 0 { // the ones overshot: take back from the largest first (Trials >= Brackets)
		for c := range n {
			if n[c] > 1 && left < 0 {
				n[c]--
				left++
			}
		}
	}
	return n
}

// bracket issues the jobs of one successive-halving bracket over points
// off..off+n-1 starting at rung b; it reports whether later brackets may
// add new points (this one has issued all of its own).
func (s Schedule) bracket(st *PruneState, b, off, n int, add func(Job) bool) bool {
	target := make([]int, n)
	for i := range target {
		target[i] = off + i
	}
	for k := b; k < s.Rungs; k++ {
		waiting := false
		for _, i := range target {
			j := Job{i, k}
			if !st.Issued[j] {
				if !add(j) {
					return false
				}
				waiting = true
			} else if _, ok := st.Value[j]; !ok {
				waiting = true
			}
		}
		if waiting || k == s.Rungs-1 {
			return true
		}
		top := best(st, target, k)
		target = top[:min(len(top), max(1, len(target)/s.Eta))]
	}
	return true
}

// Stopped returns, once Next has no more jobs, each point that did not
// reach the last rung with the rung it stopped at (pruned there).
func (s Schedule) Stopped(st *PruneState) map[int]int {
	out := map[int]int{}
	for i := range st.Points {
		k := s.Rungs - 1
		for k >= 0 && !st.Issued[Job{i, k}] {
			k--
		}
		if k >= 0 && k < s.Rungs-1 {
			out[i] = k
		}
	}
	return out
}

// Ranked is the history a sampler sees of a pruned search: a point that
// reached a higher rung counts as better than every point stopped below
// it, and points at the same rung go by their value there (as Optuna
// orders pruned trials). The values are the ranks (0 the best), which is
// all the samplers read (TPE splits by order).
func (s Schedule) Ranked(st *PruneState, points []Point) []Observation {
	type rk struct {
		i, rung int
		v       float64
	}
	var r []rk
	for i := range points {
		k := s.Rungs - 1
		for k >= 0 {
			if _, ok := st.Value[Job{i, k}]; ok {
				break
			}
			k--
		}
		v := math.Inf(1)
		if k >= 0 {
			v = st.Value[Job{i, k}]
		}
		if math.IsNaN(v) {
			v = math.Inf(1)
		}
		r = append(r, rk{i, k, v})
	}
	slices.SortStableFunc(r, func(a, b rk) int {
		switch {
		case a.rung != b.rung:
			return b.rung - a.rung
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	out := make([]Observation, len(points))
	for rank, x := range r {
		out[x.i] = Observation{Point: points[x.i], Value: float64(rank)}
		if math.IsInf(x.v, 0) {
			out[x.i].Value = math.Inf(1) // failed: the worst, as without a pruner
		}
	}
	return out
}
