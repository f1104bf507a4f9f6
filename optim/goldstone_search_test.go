package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// stiff returns a twisted chain (a smooth Goldstone twist plus noise) whose
// middle time step carries ten times the scale of the others: the curvature
// of the gauge model then differs strongly between time steps, and a large
// gauge rate overshoots along the stiff modes, as on MovieLens.
func stiff(rng *rand.Rand, b Blocks) []float64 {
	x := twisted(rng, b, 0.3, 0.05)
	for i := range b.Block(x, b.T/2) {
		b.Block(x, b.T/2)[i] *= 10
	}
	return x
}

// TestGoldstoneSearchFindsDecrease: at a gauge rate far above what the
// stiffest gauge mode tolerates the plain guard rejects the round, while
// both line searches find a step that lowers psi and apply it.
func TestGoldstoneSearchFindsDecrease(t *testing.T) {
	b := Blocks{Offset: 3, T: 9, N: 20, D: 3}
	gr := Chain(b.T, 2)
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(21, seed))
		x0 := stiff(rng, b)
		psi0 := Psi(x0, b, gr)
		// The automatic rate, as the paper sets it, for scale.
		auto := Goldstone{NoFlip: true}
		if err := auto.Init(b, gr); err != nil {
			t.Fatal(err)
		}
		rate := 10 * auto.autoRate(x0)
		for _, tc := range []struct {
			name   string
			search Search
			k2     int
		}{
			{"none", SearchNone, 10},
			{"rate", SearchRate, 10},
			{"direction", SearchDirection, 1},
		} {
			x := append([]float64(nil), x0...)
			g := Goldstone{Rate: rate, K2: tc.k2, Search: tc.search, NoFlip: true, Pool: testPool(2)}
			if err := g.Init(b, gr); err != nil {
				t.Fatal(err)
			}
			st := g.Round(x)
			psi := Psi(x, b, gr)
			if tc.search == SearchNone {
				if !st.Rejected || psi != psi0 || !(st.Predicted > 0) || math.IsInf(st.Predicted, 0) || st.Scale != 0 {
					t.Fatalf("seed %d: the plain guard accepted a step at 10x the rate: %+v (psi %v -> %v)", seed, st, psi0, psi)
				}
				continue
			}
			if st.Rejected || st.Backtracks == 0 || !(psi < psi0) || !(st.Predicted < 0) {
				t.Fatalf("seed %d %s: %+v, psi %v -> %v: want a shortened step that lowers psi", seed, tc.name, st, psi0, psi)
			}
			if e := math.Abs(st.Predicted - (psi - psi0)); e > 1e-10*psi0 {
				t.Errorf("seed %d %s: predicted %v, realised %v", seed, tc.name, st.Predicted, psi-psi0)
			}
			switch tc.search {
			case SearchRate:
				if want := rate / math.Pow(2, float64(st.Backtracks)); st.Rate != want || st.Scale != 1 {
					t.Errorf("seed %d rate: reported rate %v scale %v after %d halvings, want %v and 1", seed, st.Rate, st.Scale, st.Backtracks, want)
				}
			case SearchDirection:
				if want := math.Pow(2, -float64(st.Backtracks)); st.Scale != want || st.Rate != rate {
					t.Errorf("seed %d direction: scale %v rate %v after %d halvings, want %v and %v", seed, st.Scale, st.Rate, st.Backtracks, want, rate)
				}
			}
		}
	}
}

// autoRate is the paper's automatic rho' = 1/(T N <Z^2>) at x.
func (g *Goldstone) autoRate(x []float64) float64 {
	var sz float64
	for _, v := range x[g.b.Offset : g.b.Offset+g.b.Len()] {
		sz += v * v
	}
	return float64(g.d) / sz
}

// TestRoundPrediction: every gauge step reports the predicted change of
// psi, and where the prediction is exact (exact rotations, the linear form
// with its Gram term, Procrustes) it agrees with the realised change
// PsiAfter - PsiStep to rounding, rejected rounds aside (they change
// nothing). The round also reports the rate, the step factor and psi
// before the step.
func TestRoundPrediction(t *testing.T) {
	b := Blocks{T: 10, N: 15, D: 4}
	cycle, _ := NewGraph(10, []Edge{{0, 1, 1}, {1, 2, 2}, {2, 3, 1}, {3, 4, 0.5}, {4, 5, 1}, {5, 6, 1}, {6, 7, 3}, {7, 8, 1}, {8, 9, 1}, {9, 0, 2}})
	for _, tc := range []struct {
		name   string
		g      Gauge
		gr     *Graph
		noOrth bool // huge steps: exp(Gamma) may lose orthogonality to rounding
	}{
		{"exact", &Goldstone{}, Chain(b.T, 3), false},
		{"exact flips", &Goldstone{Reset: true}, Chain(b.T, 3), false},
		{"exact cycle", &Goldstone{Search: SearchRate}, cycle, false},
		{"exact noguard", &Goldstone{NoGuard: true, Rate: 0.05}, Chain(b.T, 3), true},
		{"linear", &Goldstone{Rotation: RotationLinear}, Chain(b.T, 3), false},
		{"linear noguard", &Goldstone{Rotation: RotationLinear, NoGuard: true, NoFlip: true}, Chain(b.T, 3), false},
		{"linear noguard cycle", &Goldstone{Rotation: RotationLinear, NoGuard: true}, cycle, false},
		{"rate search", &Goldstone{Search: SearchRate, Rate: 1}, Chain(b.T, 3), false},
		{"direction search", &Goldstone{Search: SearchDirection, Rate: 1, K2: 1}, Chain(b.T, 3), false},
		{"procrustes", &Procrustes{}, Chain(b.T, 3), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(22, 1))
			x := twisted(rng, b, 0.25, 0.2)
			if err := tc.g.Init(b, tc.gr); err != nil {
				t.Fatal(err)
			}
			checked := 0
			for r := 0; r < 12; r++ {
				before := Psi(x, b, tc.gr)
				if math.IsInf(before, 0) || math.IsNaN(before) {
					break // the unguarded exact step diverged
				}
				st := tc.g.Round(x)
				after := Psi(x, b, tc.gr)
				if relErr(st.PsiBefore, before) > 1e-12 || relErr(st.PsiAfter, after) > 1e-12 {
					t.Fatalf("round %d: PsiBefore %v PsiAfter %v, Psi %v and %v", r, st.PsiBefore, st.PsiAfter, before, after)
				}
				if st.Flips == 0 && st.PsiStep != st.PsiBefore {
					t.Fatalf("round %d: no flips, but PsiStep %v != PsiBefore %v", r, st.PsiStep, st.PsiBefore)
				}
				if math.IsNaN(st.Predicted) {
					// Only an exact map that lost orthogonality to rounding
					// (a huge Gamma) has no prediction.
					if !tc.noOrth {
						t.Fatalf("round %d: no prediction: %+v", r, st)
					}
					continue
				}
				_, isG := tc.g.(*Goldstone)
				if !st.Rejected && math.IsNaN(st.Predicted) {
					continue // an unpredicted step applied without a guard
				}
				if isG == math.IsNaN(st.Rate) {
					t.Fatalf("round %d: rate %v (Goldstone: %v)", r, st.Rate, isG)
				}
				if st.Rejected {
					if st.Scale != 0 || st.PsiAfter != st.PsiStep {
						t.Fatalf("round %d: rejected with scale %v, psi %v -> %v", r, st.Scale, st.PsiStep, st.PsiAfter)
					}
					continue
				}
				real := st.PsiAfter - st.PsiStep
				if e := math.Abs(st.Predicted - real); e > 1e-11*(st.PsiStep+math.Abs(real)) {
					t.Fatalf("round %d: predicted %v, realised %v (difference %.3g, psi %v)", r, st.Predicted, real, e, st.PsiStep)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no round applied")
			}
		})
	}
}

// TestGoldstoneSearchDeterministic: the line searches give the same bits at
// any number of workers.
func TestGoldstoneSearchDeterministic(t *testing.T) {
	b := Blocks{Offset: 1, T: 12, N: 120, D: 9}
	gr := Chain(b.T, 2)
	for _, search := range []Search{SearchRate, SearchDirection} {
		rng := rand.New(rand.NewPCG(23, uint64(search)))
		x0 := stiff(rng, b)
		var ref []float64
		var refSt []RoundStats
		for _, w := range []int{1, 2, 3} {
			x := append([]float64(nil), x0...)
			g := Goldstone{Rate: 1, K2: 1 + 9*int(search-SearchDirection), Search: search, Pool: testPool(w)}
			if err := g.Init(b, gr); err != nil {
				t.Fatal(err)
			}
			var sts []RoundStats
			for r := 0; r < 4; r++ {
				sts = append(sts, g.Round(x))
			}
			if sts[0].Backtracks == 0 {
				t.Fatalf("search %d: no backtracking: the test does not exercise the search", search)
			}
			if ref == nil {
				ref, refSt = x, sts
				continue
			}
			for i := range x {
				if x[i] != ref[i] {
					t.Fatalf("search %d workers %d: x[%d] = %v, one worker %v", search, w, i, x[i], ref[i])
				}
			}
			for r := range sts {
				a, c := sts[r], refSt[r]
				if a.PsiAfter != c.PsiAfter || math.Float64bits(a.Predicted) != math.Float64bits(c.Predicted) || a.Backtracks != c.Backtracks || a.Rate != c.Rate || a.Rejected != c.Rejected {
					t.Fatalf("search %d workers %d round %d: %+v, one worker %+v", search, w, r, a, c)
				}
			}
		}
	}
}
