package dwe

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"gonum.org/v1/gonum/mat"

	"goldstone/optim"
)

// alignedError returns ||R got - want|| / ||want|| for the orthogonal R (one
// for all steps and columns) that minimises it (orthogonal Procrustes).
func alignedError(t *testing.T, got, want []float64, d int) float64 {
	t.Helper()
	n := len(want) / d
	g := mat.NewDense(n, d, slices.Clone(got))
	w := mat.NewDense(n, d, slices.Clone(want))
	var m mat.Dense
	m.Mul(w.T(), g) // d x d: sum_c want_c got_c^T
	var svd mat.SVD
	if !svd.Factorize(&m, mat.SVDFull) {
		t.Fatal("svd failed")
	}
	var p, q, r mat.Dense
	svd.UTo(&p)
	svd.VTo(&q)
	r.Mul(&p, q.T()) // R = P Q^T maps got onto want
	var rg mat.Dense
	rg.Mul(g, r.T())
	rg.Sub(&rg, w)
	return mat.Norm(&rg, 2) / mat.Norm(w, 2)
}

func TestMAPRecoversPlanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	c, planted, err := Planted{V: 50, T: 5, Dim: 3}.Generate(rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		gauge optim.Gauge
	}{
		{"adam", nil},
		{"adam+goldstone", &optim.Goldstone{K2: 10}},
		{"adam+procrustes", &optim.Procrustes{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMAP(c, Config{Dim: 3, Diffusion: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, m.NumParams())
			m.Init(x, rand.New(rand.NewPCG(12, 12)))
			before := alignedError(t, x, planted, 3)
			tr := Trainer{Model: m, Gauge: tc.gauge, K1: 10, Steps: 1500, MinibatchSteps: 300,
				BatchWords: 20, BatchContexts: 25, Seed: 3}
			var last Iter
			var phases [2]int
			err = tr.Run(context.Background(), x, func(it *Iter) error {
				last = *it
				if it.Minibatch {
					phases[0]++
				} else {
					phases[1]++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if phases != [2]int{300, 1200} {
				t.Errorf("phases %v, want [300 1200]", phases)
			}
			after := alignedError(t, x, planted, 3)
			t.Logf("aligned relative error %.3g -> %.3g, final loss %.6g (psi %.3g)", before, after, last.Loss, last.Psi)
			if after > 0.05 {
				t.Errorf("aligned relative error after training %.3g, want < 0.05", after)
			}
		})
	}
}

// randomRotation returns a random d x d orthogonal matrix (row-major).
func randomRotation(rng *rand.Rand, d int) []float64 {
	a := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	return slices.Clone(q.RawMatrix().Data)
}

func TestLocalLossRotationInvariant(t *testing.T) {
	c := smallCounts(t, 13, 31, 3, 5)
	const d = 4
	m, err := NewMAP(c, Config{Dim: d, InitStd: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(14, 14))
	x := make([]float64, m.NumParams())
	m.Init(x, rng)
	g := make([]float64, len(x))
	l0 := m.LocalLoss(g, x)
	y := make([]float64, len(x))
	b := m.Blocks()
	for s := 0; s < b.T; s++ { // a different rotation per step
		r := randomRotation(rng, d)
		zx, zy := b.Block(x, s), b.Block(y, s)
		for col := 0; col < b.N; col++ {
			for i := 0; i < d; i++ {
				var v float64
				for k := 0; k < d; k++ {
					v += r[i*d+k] * zx[col*d+k]
				}
				zy[col*d+i] = v
			}
		}
	}
	l1 := m.LocalLoss(g, y)
	if math.Abs(l1-l0) > 1e-11*math.Abs(l0) {
		t.Fatalf("local loss %.15g after rotation, %.15g before", l1, l0)
	}
	if optim.Psi(x, b, m.Graph()) == optim.Psi(y, b, m.Graph()) {
		t.Fatal("psi unchanged by per-step rotations; test is vacuous")
	}
}

func TestPredictiveLogLik(t *testing.T) {
	c := smallCounts(t, 15, 17, 3, 4)
	const d = 3
	m, err := NewMAP(c, Config{Dim: d, InitStd: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(16, 16)))
	b := m.Blocks()
	// Test data identical to training step 1, at its time: no interpolation.
	test := &Counts{V: c.V, Times: []float64{c.Times[1]}, Steps: []StepCounts{c.Steps[1]}}
	got, err := PredictiveLogLik(x, b, c.Times, test, nil)
	if err != nil {
		t.Fatal(err)
	}
	vd := c.V * d
	z1 := b.Block(x, 1)
	want := -StepNegLogLik(z1[:vd], z1[vd:], &c.Steps[1], c.V, d, nil) / c.Steps[1].Total()
	if math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("PredictiveLogLik %v, want %v", got, want)
	}
	// Interpolation halfway between steps 0 and 1, and clamping.
	tau := 0.5 * (c.Times[0] + c.Times[1])
	zi := Interpolate(nil, x, b, c.Times, tau)
	z0 := b.Block(x, 0)
	for i := range zi {
		if w := 0.5 * (z0[i] + z1[i]); math.Abs(zi[i]-w) > 1e-15 {
			t.Fatalf("Interpolate[%d] = %v, want %v", i, zi[i], w)
		}
	}
	if zc := Interpolate(nil, x, b, c.Times, c.Times[2]+10); !slices.Equal(zc, b.Block(x, 2)) {
		t.Error("Interpolate after the last step is not the last step")
	}
}

func TestWordAgingAndCosines(t *testing.T) {
	// V=4, d=2, T=2; word vectors only matter.
	b := optim.Blocks{T: 2, N: 8, D: 2}
	x := make([]float64, b.Len())
	first := [][2]float64{{1, 0}, {0, 1}, {1, 1}, {-1, 0}}
	last := [][2]float64{{0, 1}, {0, 2}, {1, 1}, {1, 0.1}}
	for i := range first {
		copy(b.Block(x, 0)[i*2:], first[i][:])
		copy(b.Block(x, 1)[i*2:], last[i][:])
	}
	vocab := []string{"a", "b", "c", "d"}
	got, err := WordAging(x, b, vocab, "a", 1, 0, 2) // last(a) = (0,1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "c"}; !slices.Equal(got, want) {
		t.Errorf("WordAging = %v, want %v", got, want)
	}
	if _, err := WordAging(x, b, vocab, "zz", 1, 0, 2); err == nil {
		t.Error("unknown query: no error")
	}
	if _, err := WordAging(x, b, vocab, "a", 2, 0, 2); err == nil {
		t.Error("step out of range: no error")
	}
	// From the first step to the last: first(d) = (-1,0) has cosine 0 with
	// last(a) and last(b), -1/sqrt(2) with last(c) and -1/sqrt(1.01) with
	// last(d) = (1,0.1), so d ranks last.
	if got, err := WordAging(x, b, vocab, "d", 0, 1, 4); err != nil || got[3] != "d" {
		t.Errorf("WordAging(d, 0 -> 1) = %v, %v; want d last", got, err)
	}
	cos := FirstLastCosines(x, b)
	want := []float64{0, 1, 1, -1 / math.Sqrt(1.01)}
	for i := range want {
		if math.Abs(cos[i]-want[i]) > 1e-12 {
			t.Errorf("cos[%d] = %v, want %v", i, cos[i], want[i])
		}
	}
}

func TestExportRoundTrip(t *testing.T) {
	b := optim.Blocks{T: 3, N: 6, D: 2}
	rng := rand.New(rand.NewPCG(17, 17))
	x := make([]float64, b.Len())
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	vocab := []string{"the", "cat", "sat"}
	times := []float64{1800, 1850.5, 2008}
	var buf bytes.Buffer
	if err := WriteWord2Vec(&buf, x, b, 2, vocab); err != nil {
		t.Fatal(err)
	}
	words, vecs, d, err := ReadWord2Vec(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d != 2 || !slices.Equal(words, vocab) || !slices.Equal(vecs, b.Block(x, 2)[:6]) {
		t.Errorf("word2vec round trip: d=%d words=%v vecs=%v", d, words, vecs)
	}
	buf.Reset()
	if err := WriteParquet(&buf, x, b, times, vocab); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[EmbeddingRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("%d parquet rows, want 9", len(rows))
	}
	for _, r := range rows {
		want := wordVec(x, b, int(r.Step), slices.Index(vocab, r.Word))
		if r.Time != times[r.Step] || !slices.Equal(r.Vector, want) {
			t.Errorf("row %+v, want time %v vector %v", r, times[r.Step], want)
		}
	}
	if err := WriteWord2Vec(&buf, x, b, 0, []string{"a b", "c", "d"}); err == nil {
		t.Error("word with a space: no error")
	}
}

func TestValidateRejects(t *testing.T) {
	ok := func() *Counts {
		return &Counts{V: 3, Times: []float64{0, 1}, Steps: []StepCounts{
			{I: []int32{0, 1}, J: []int32{2, 0}, Pos: []float64{1, 2}, NegA: []float64{1, 1, 1}, NegB: []float64{1, 1, 1}},
			{NegA: []float64{1, 1, 1}, NegB: []float64{1, 1, 1}},
		}}
	}
	if err := ok().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mod  func(c *Counts)
	}{
		{"unsorted", func(c *Counts) { c.Steps[0].I = []int32{1, 0} }},
		{"duplicate", func(c *Counts) { c.Steps[0].I, c.Steps[0].J = []int32{0, 0}, []int32{1, 1} }},
		{"range", func(c *Counts) { c.Steps[0].J[1] = 3 }},
		{"zero count", func(c *Counts) { c.Steps[0].Pos[0] = 0 }},
		{"negative neg", func(c *Counts) { c.Steps[1].NegB[2] = -1 }},
		{"times", func(c *Counts) { c.Times[1] = 0 }},
		{"neg length", func(c *Counts) { c.Steps[1].NegA = c.Steps[1].NegA[:2] }},
	} {
		c := ok()
		tc.mod(c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func FuzzReadWord2Vec(f *testing.F) {
	f.Add([]byte("2 2\na 1 2\nb 3 4e-3\n"))
	f.Add([]byte("1 3\nx 1 2\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		words, vecs, d, err := ReadWord2Vec(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(vecs) != len(words)*d {
			t.Fatalf("%d words, d=%d, %d values", len(words), d, len(vecs))
		}
	})
}

func TestVariationalRecoversPlanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	c, planted, err := Planted{V: 30, T: 4, Dim: 2}.Generate(rng)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewVariational(c, Config{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, m.NumParams())
	m.Init(x, rand.New(rand.NewPCG(22, 22)))
	tr := Trainer{Model: m, Steps: 1500, MinibatchSteps: 200, BatchWords: 15, BatchContexts: 15, Seed: 5}
	if err := tr.Run(context.Background(), x, nil); err != nil {
		t.Fatal(err)
	}
	e := alignedError(t, m.Means(x), planted, 2)
	t.Logf("variational means: aligned relative error %.3g", e)
	if e > 0.1 {
		t.Errorf("aligned relative error %.3g, want < 0.1", e)
	}
}

// TestPoolDeterminism: the losses and gradients of MAP and Variational, full
// batch and minibatch, and the predictive log-likelihood are bit-identical
// inline (nil pool) and on pools of any size.
func TestPoolDeterminism(t *testing.T) {
	c := smallCounts(t, 31, 300, 3, 12) // V > evalChunkRows: several chunks
	pools := []*optim.Pool{nil, optim.NewPool(1), optim.NewPool(2), optim.NewPool(3)}
	for _, p := range pools {
		defer p.Close()
	}
	for _, tc := range []struct {
		name  string
		batch int
		make  func(cfg Config) Trainable
	}{
		{"map", 0, func(cfg Config) Trainable { m, _ := NewMAP(c, cfg); return m }},
		{"map/minibatch", 40, func(cfg Config) Trainable { m, _ := NewMAP(c, cfg); return m }},
		{"variational", 0, func(cfg Config) Trainable { m, _ := NewVariational(c, cfg); return m }},
		{"variational/minibatch", 40, func(cfg Config) Trainable { m, _ := NewVariational(c, cfg); return m }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var loss0 float64
			var grad0, x []float64
			for k, p := range pools {
				m := tc.make(Config{Dim: 5, Tile: 16, Pool: p})
				if x == nil {
					x = make([]float64, m.NumParams())
					m.Init(x, rand.New(rand.NewPCG(32, 1)))
				}
				m.Resample(rand.New(rand.NewPCG(33, 1)), tc.batch, tc.batch)
				g := make([]float64, len(x))
				loss := m.LocalLoss(g, x)
				if k == 0 {
					loss0, grad0 = loss, g
					continue
				}
				if loss != loss0 || !slices.Equal(g, grad0) {
					t.Fatalf("pool of %d workers: loss %v (inline %v) or gradient differs", p.Workers(), loss, loss0)
				}
			}
			if tc.batch != 0 {
				return
			}
			b := optim.Blocks{T: c.T(), N: 2 * c.V, D: 5}
			var ll0 float64
			for k, p := range pools {
				ll, err := PredictiveLogLik(x[:b.Len()], b, c.Times, c, p)
				if err != nil {
					t.Fatal(err)
				}
				if k == 0 {
					ll0 = ll
				} else if ll != ll0 {
					t.Fatalf("predictive loglik on %d workers: %v, inline %v", p.Workers(), ll, ll0)
				}
			}
		})
	}
}
