package search

import (
	"reflect"
	"testing"
)

// drive runs a schedule to its end on values given by value(point, rung),
// every wave's jobs finishing before the next is asked for, and returns
// the jobs of each wave.
func drive(t *testing.T, s Schedule, value func(p, r int) float64) (waves [][]Job, st *PruneState) {
	t.Helper()
	st = &PruneState{Issued: map[Job]bool{}, Value: map[Job]float64{}}
	for range 1000 {
		jobs, n := s.Next(st)
		if len(jobs) == 0 {
			return waves, st
		}
		if len(jobs) > s.Wave {
			t.Fatalf("wave of %d jobs, want at most %d", len(jobs), s.Wave)
		}
		st.Points += n
		for _, j := range jobs {
			if st.Issued[j] {
				t.Fatalf("job %v issued twice", j)
			}
			st.Issued[j] = true
			st.Value[j] = value(j.Point, j.Rung)
		}
		waves = append(waves, jobs)
	}
	t.Fatal("the schedule never ends")
	return nil, nil
}

// Point i's value is i at every rung (lower is better): the first points
// are the best.
func byIndex(p, _ int) float64 { return float64(p) }

func TestSuccessiveHalving(t *testing.T) {
	waves, st := drive(t, Schedule{Pruner: "successive_halving", Rungs: 3, Eta: 3, Brackets: 1, Trials: 9, Wave: 4}, byIndex)
	want := [][]Job{{{0, 0}, {1, 0}, {2, 0}, {3, 0}}, {{4, 0}, {5, 0}, {6, 0}, {7, 0}}, {{8, 0}}, {{0, 1}, {1, 1}, {2, 1}}, {{0, 2}}}
	if !reflect.DeepEqual(waves, want) {
		t.Fatalf("waves %v, want %v", waves, want)
	}
	stopped := Schedule{Rungs: 3}.Stopped(st)
	if len(stopped) != 8 || stopped[1] != 1 || stopped[8] != 0 {
		t.Fatalf("stopped %v", stopped)
	}
}

func TestASHA(t *testing.T) {
	// Values decreasing with the index: every new point is the best so
	// far, so ASHA promotes as results come.
	waves, _ := drive(t, Schedule{Pruner: "asha", Rungs: 3, Eta: 3, Brackets: 1, Trials: 9, Wave: 3}, func(p, _ int) float64 { return float64(-p) })
	// Promotions first (the top rung's first), then new points: after
	// wave 1 the best 1 of 3 at rung 0 (point 2) goes on; after wave 2
	// the best 1 of 5 (point 4); after wave 3 the best 2 of 7 (6, 5 new
	// to rung 1), and so on, each rung's best floor(n/3) at that moment.
	want := [][]Job{{{0, 0}, {1, 0}, {2, 0}}, {{2, 1}, {3, 0}, {4, 0}}, {{4, 1}, {5, 0}, {6, 0}}, {{6, 1}, {5, 1}, {7, 0}},
		{{6, 2}, {7, 1}, {8, 0}}, {{7, 2}, {8, 1}}, {{8, 2}}}
	if !reflect.DeepEqual(waves, want) {
		t.Fatalf("waves %v, want %v", waves, want)
	}
}

func TestMedianPruner(t *testing.T) {
	// Point i's value is i: a point goes on only when it is no worse than
	// the median of itself and the points before it, i.e. point 0 alone.
	waves, st := drive(t, Schedule{Pruner: "median", Rungs: 2, Eta: 3, Brackets: 1, Trials: 3, Wave: 3}, byIndex)
	want := [][]Job{{{0, 0}, {1, 0}, {2, 0}}, {{0, 1}}}
	if !reflect.DeepEqual(waves, want) {
		t.Fatalf("waves %v, want %v", waves, want)
	}
	if s := (Schedule{Rungs: 2}).Stopped(st); !reflect.DeepEqual(s, map[int]int{1: 0, 2: 0}) {
		t.Fatalf("stopped %v", s)
	}
}

func TestHyperbandBrackets(t *testing.T) {
	s := Schedule{Pruner: "hyperband", Rungs: 3, Eta: 3, Brackets: 3, Trials: 14, Wave: 100}
	// Hyperband's n: 9, 3*3/2 = 4.5, 3 for S = 2, scaled to 14 points:
	// 7.6, 3.8, 2.5 rounded down, the 2 left to the first brackets.
	if n := s.bracketSizes(); !reflect.DeepEqual(n, []int{8, 4, 2}) {
		t.Fatalf("bracket sizes %v", n)
	}
	waves, _ := drive(t, s, byIndex)
	// Bracket 0: points 0-7 from rung 0; bracket 1: 8-11 from rung 1;
	// bracket 2: 12-13 at rung 2 alone.
	first := waves[0]
	if len(first) != 14 || first[8] != (Job{8, 1}) || first[12] != (Job{12, 2}) {
		t.Fatalf("first wave %v", first)
	}
	last := waves[len(waves)-1]
	if !reflect.DeepEqual(last, []Job{{0, 2}}) {
		t.Fatalf("last wave %v", last)
	}
}

func TestRankedHistory(t *testing.T) {
	st := &PruneState{Points: 3, Issued: map[Job]bool{}, Value: map[Job]float64{{0, 0}: 1, {1, 0}: 0.5, {1, 1}: 9, {2, 0}: 0.1}}
	obs := Schedule{Rungs: 2}.Ranked(st, []Point{{}, {}, {}})
	// Point 1 reached rung 1: the best whatever its value; then 2 and 0 by
	// their values at rung 0.
	if obs[1].Value != 0 || obs[2].Value != 1 || obs[0].Value != 2 {
		t.Fatalf("ranks %v", obs)
	}
}
