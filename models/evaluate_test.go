package models

import (
	"math"
	"testing"

	"goldstone/optim"
)

func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pos, neg []float64
		want     float64
	}{
		{"perfect", []float64{2, 3}, []float64{0, 1}, 1},
		{"reversed", []float64{0}, []float64{1, 2}, 0},
		{"all tied", []float64{1, 1}, []float64{1, 1, 1}, 0.5},
		// pairs: 0.5 vs {0.5,0.1,0.9}: tie, win, loss = 1.5; 0.9 vs: win, win, tie = 2.5; -> 4/6
		{"ties", []float64{0.5, 0.9}, []float64{0.5, 0.1, 0.9}, 4.0 / 6},
		// 3 pos x 2 neg: 1 vs {1,2}: tie, loss = .5; 2: win, tie = 1.5; 3: 2 -> 4/6
		{"ties2", []float64{1, 2, 3}, []float64{2, 1}, 4.0 / 6},
		{"no negatives", []float64{1}, nil, math.NaN()},
		{"nan", []float64{math.NaN()}, []float64{1}, math.NaN()},
	} {
		got := AUC(tc.pos, tc.neg)
		if !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: AUC = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEvaluateRatings(t *testing.T) {
	// T=2, users=2, items=1, D=1. Bin 0: u = (1, -1), v = 2. Bin 1: u = (0, 3), v = 1.
	x := []float64{1, -1, 2, 0, 3, 1}
	b := optim.Blocks{T: 2, N: 3, D: 1}
	test := &Ratings{}
	test.Append(0, 0, 0, 1)  // s = 2
	test.Append(0, 1, 0, 1)  // s = -2
	test.Append(1, 0, 0, -1) // s = 0
	test.Append(1, 1, 0, -1) // s = 3
	got, err := EvaluateRatings(x, b, 2, test)
	if err != nil {
		t.Fatal(err)
	}
	ls := func(y float64) float64 { return -math.Log1p(math.Exp(-y)) }
	wantLL := (ls(2) + ls(-2) + ls(0) + ls(-3)) / 4
	// pos {2,-2} vs neg {0,3}: 2>0 win, 2<3, -2 loses both -> 1/4
	want := Metrics{N: 4, LogLik: wantLL, AUC: 0.25, Accuracy: (1 + 0 + 0.5 + 0) / 4}
	if got.N != want.N || math.Abs(got.LogLik-want.LogLik) > 1e-15 || got.AUC != want.AUC || got.Accuracy != want.Accuracy {
		t.Errorf("got %+v, want %+v", got, want)
	}

	m := NewLogisticMF(RatingsSpec{Train: test, Users: 2, Items: 1, D: 1, T: 2}, false)
	if got2, err := m.Evaluate(x, test); err != nil || got2 != got {
		t.Errorf("method: %+v, %v; want %+v", got2, err, got)
	}

	bad := &Ratings{}
	bad.Append(0, 2, 0, 1)
	if _, err := EvaluateRatings(x, b, 2, bad); err == nil {
		t.Errorf("user out of range: no error")
	}
}

func TestBaseRate(t *testing.T) {
	train := &Ratings{}
	for _, v := range []int8{1, 1, 1, -1} {
		train.Append(0, 0, 0, v)
	}
	test := &Ratings{}
	for _, v := range []int8{1, -1} {
		test.Append(0, 0, 0, v)
	}
	got := BaseRate(train, test)
	wantLL := (math.Log(0.75) + math.Log(0.25)) / 2
	if got.N != 2 || math.Abs(got.LogLik-wantLL) > 1e-15 || got.AUC != 0.5 || got.Accuracy != 0.5 {
		t.Errorf("got %+v, want LogLik %v AUC 0.5 Accuracy 0.5", got, wantLL)
	}
}
