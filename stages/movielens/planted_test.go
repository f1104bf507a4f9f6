package movielens

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"goldstone/formats/ratings"
	"goldstone/optim"
)

func smallPlanted() PlantedConfig {
	return PlantedConfig{
		Users: 300, Items: 200, Ratings: 60000, Bins: 6, D: 4, Seed: 42,
		Start: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC),
		Drift: 0.2,
	}
}

func TestGenerateDeterministic(t *testing.T) {
	ctx := context.Background()
	cfg := smallPlanted()
	cfg.Ratings = 200000 // several chunks per bin
	var ref, refVec bytes.Buffer
	cfg.Pool = nil // inline
	st, err := Generate(ctx, &ref, &refVec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Ratings != cfg.Ratings || st.Positive+st.Negative+st.Mid != cfg.Ratings || st.Bytes != int64(ref.Len()) {
		t.Fatalf("stats %+v", st)
	}
	if want := int64(cfg.Bins*(cfg.Users+cfg.Items)*cfg.D) * 8; int64(refVec.Len()) != want {
		t.Fatalf("vectors: %d bytes, want %d", refVec.Len(), want)
	}
	var sum int64
	for k, c := range st.PerBin {
		sum += c
		if k > 0 && c < st.PerBin[k-1] {
			t.Errorf("volume not growing: %v", st.PerBin)
		}
	}
	if sum != cfg.Ratings || st.PerBin[cfg.Bins-1] < 8*st.PerBin[0] {
		t.Errorf("per-bin counts %v", st.PerBin)
	}
	cfg.Pool = optim.NewPool(3)
	defer cfg.Pool.Close()
	var again, againVec bytes.Buffer
	if _, err := Generate(ctx, &again, &againVec, cfg); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ref.Bytes(), again.Bytes()) || !bytes.Equal(refVec.Bytes(), againVec.Bytes()) {
		t.Fatal("output depends on the pool's workers")
	}
}

// TestPlantedRoundTrip generates, ingests, binarizes and bins with T = Bins, then checks the
// median, that bins and dense indices line up with the planted vectors (x agrees with the
// sign of the planted u.v far more often than chance), and the per-bin counts.
func TestPlantedRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := smallPlanted()
	csv, vec := filepath.Join(dir, "ratings.csv"), filepath.Join(dir, "planted.npy")
	gst, err := GenerateFile(ctx, csv, vec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "ratings.parquet")
	ist, err := ratings.Ingest(ctx, csv, raw, ratings.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ist.Ratings != cfg.Ratings || ist.MinTime != cfg.Start.Unix() || ist.MaxTime != cfg.End.Unix() || ist.Users > cfg.Users || ist.Items > cfg.Items {
		t.Fatalf("ingest %+v", ist)
	}
	bin := filepath.Join(dir, "binary.parquet")
	bst, err := Binarize(ctx, raw, bin)
	if err != nil {
		t.Fatal(err)
	}
	if bst.Median != 3.5 || bst.Dropped != gst.Mid || bst.Positive != gst.Positive || bst.Negative != gst.Negative {
		t.Fatalf("binarize %+v, generator %+v", bst, gst)
	}
	binned := filepath.Join(dir, "binned.parquet")
	res, err := Bin(ctx, bin, binned, cfg.Bins)
	if err != nil {
		t.Fatal(err)
	}
	if res.MinTime != cfg.Start.Unix() || res.MaxTime != cfg.End.Unix() {
		t.Fatalf("binned span %d..%d", res.MinTime, res.MaxTime)
	}
	cols, err := ratings.LoadColumns(ctx, binned)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(vec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	D := cfg.D
	U, I := len(res.Users), len(res.Items)
	pu, pv := make([]float64, cfg.Users*D), make([]float64, cfg.Items*D)
	au, av := make([]float64, U*D), make([]float64, I*D)
	var agree, total int
	for b := range cfg.Bins {
		if err := ReadPlanted(f, cfg, b, pu, pv); err != nil {
			t.Fatal(err)
		}
		AlignRows(au, pu, res.Users, D)
		AlignRows(av, pv, res.Items, D)
		for k := range cols.Len() {
			if int(cols.Bin[k]) != b {
				continue
			}
			u, i := int(cols.User[k]), int(cols.Item[k])
			dot := 0.0
			for d := range D {
				dot += au[u*D+d] * av[i*D+d]
			}
			if (dot > 0) == (cols.X[k] > 0) {
				agree++
			}
			total++
		}
	}
	t.Logf("x agrees with the planted sign on %d of %d ratings", agree, total)
	// With D = 4 and s = 1, E[sigmoid(|u.v|)] is about 0.76; misaligned bins or ids give 0.5.
	if frac := float64(agree) / float64(total); total != cols.Len() || frac < 0.7 {
		t.Fatalf("x agrees with the planted sign on %.3f of %d ratings", frac, total)
	}
}

func TestGenerateConfigErrors(t *testing.T) {
	base := smallPlanted()
	for name, mod := range map[string]func(*PlantedConfig){
		"users":   func(c *PlantedConfig) { c.Users = 0 },
		"ratings": func(c *PlantedConfig) { c.Ratings = int64(c.Bins) },
		"span":    func(c *PlantedConfig) { c.End = c.Start.Add(3 * time.Second) },
		"drift":   func(c *PlantedConfig) { c.Drift = 1.5 },
	} {
		c := base
		mod(&c)
		if _, err := Generate(context.Background(), &bytes.Buffer{}, nil, c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestIrwinHall4Moments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	var m1, m2 float64
	for range n {
		z := irwinHall4(rng.Uint64())
		m1 += z
		m2 += z * z
	}
	m1 /= n
	m2 /= n
	if math.Abs(m1) > 0.01 || math.Abs(m2-1) > 0.01 {
		t.Fatalf("mean %v, second moment %v", m1, m2)
	}
	if lo, hi := irwinHall4(0), irwinHall4(^uint64(0)); math.Abs(lo+hi) > 1e-12 || hi > 2*math.Sqrt(3) {
		t.Fatalf("support [%v, %v]", lo, hi)
	}
}
