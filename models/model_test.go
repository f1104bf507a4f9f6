package models

import (
	"math/rand/v2"
	"testing"
)

func TestProblemOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []Model{
		newDenseTest(rng, 3, 4, 2, 5, false, 0.1),
		newLogisticTest(2, 50, 6, 4, 2, 5),
	} {
		p := ProblemOf(m)
		if p.Blocks != m.Blocks() || p.Graph != m.Graph() || p.Graph == nil || p.Graph.N != 5 {
			t.Errorf("%T: problem %+v", m, p)
		}
		if p.Blocks.Len() != m.NumParams() {
			t.Errorf("%T: blocks cover %d of %d params", m, p.Blocks.Len(), m.NumParams())
		}
		x := make([]float64, m.NumParams())
		m.Init(x, rng)
		g1, g2 := make([]float64, len(x)), make([]float64, len(x))
		if a, b := p.Local(g1, x), m.LocalLoss(g2, x); a != b {
			t.Errorf("%T: Local %v != LocalLoss %v", m, a, b)
		}
		sameBits(t, "grad", g1, g2)
	}
}
