package search

import (
	"testing"

	"goldstone/internal/bitscheck"
	"goldstone/optim"
)

// bitsHistory is fakeHistory on the deterministic Log, with every product
// rounded (test code is compiled with fusion too): the same values on
// every build.
func bitsHistory(pts []Point) []Observation {
	var h []Observation
	for _, p := range pts {
		d := optim.Log(p["lr"].(float64)) + 3
		v := float64(d*d) + p["lambda"].(float64)/20
		if p["gauge"] == "none" {
			v++
		}
		h = append(h, Observation{Point: p, Value: v})
	}
	return h
}

// TestBits records 40 suggestions of every sampler (waves of 4, each from
// the results of the earlier ones) in testdata/samplers.bits.json: the
// suggestions, and so the searches, are the same bits on every build.
func TestBits(t *testing.T) {
	sp := testSpace()
	var v bitscheck.Values
	for _, name := range Names() {
		s, _ := Lookup(name)
		if name == "grid" {
			continue // the test space has a uniform range; the grid has no float to check
		}
		var pts []Point
		for len(pts) < 40 {
			got, err := s.Suggest(sp, 11, bitsHistory(pts), len(pts), 4)
			if err != nil {
				t.Fatal(err)
			}
			pts = append(pts, got...)
		}
		for _, p := range pts {
			for j := range sp.Params {
				q := &sp.Params[j]
				x, ok := p[q.Key]
				switch {
				case !ok:
					v.Add(name+"/"+q.Key, -1)
				case q.Dist == Choice:
					v.Add(name+"/"+q.Key, float64(q.choiceIndex(x)))
				case q.Dist == Int:
					v.Add(name+"/"+q.Key, float64(x.(int64)))
				default:
					v.Add(name+"/"+q.Key, x.(float64))
				}
			}
		}
	}
	bitscheck.Check(t, "samplers", &v)
}
