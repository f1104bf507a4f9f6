package movielens

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"goldstone/formats/ratings"

	"goldstone/internal/testdata"
	"goldstone/optim"
)

func TestActivityOf(t *testing.T) {
	// Two bins over [0, 100]: user 1 rates 3 items in bin 0 and 1 in bin 1,
	// user 2 rates item 7 once in bin 1.
	rs := []ratings.Rating{
		{User: 1, Item: 7, Timestamp: 0}, {User: 1, Item: 8, Timestamp: 10}, {User: 1, Item: 9, Timestamp: 20},
		{User: 1, Item: 7, Timestamp: 60}, {User: 2, Item: 7, Timestamp: 100},
	}
	a := ActivityOf(rs, 2)
	if a.Ratings != 5 || a.Users != 2 || a.Items != 3 {
		t.Fatalf("counts %+v", a)
	}
	// (user, bin) pairs: (1,0)=3, (1,1)=1, (2,1)=1.
	if q := a.PerUserBin; q.Mean != 5.0/3 || q.Median != 1 || q.Max != 3 {
		t.Errorf("per (user, bin) %+v", q)
	}
	if q := a.BinsPerUser; q.Mean != 1.5 || q.Median != 1 || q.Max != 2 {
		t.Errorf("bins per user %+v", q)
	}
	if q := a.PerItem; q.Mean != 5.0/3 || q.Median != 1 || q.P90 != 3 || q.Max != 3 {
		t.Errorf("per item %+v", q)
	}
	tab := ActivityTable([]string{"x"}, []Activity{a})
	if !strings.Contains(tab, "| active bins per user: mean / median / p90 / max | 1.5 / 1 / 2 / 2 |") {
		t.Errorf("table:\n%s", tab)
	}
}

// TestActivityRealVsPlanted measures the statistics the planted generator
// is to be calibrated to on ml-latest-small (100 bins, as the paper's
// MovieLens setting) next to today's generator at the same size. Real
// users are bursty: few active bins, many ratings in each; the generator
// spreads every user over the bins. The table is logged so that a
// calibrated generator can be checked against the real column.
func TestActivityRealVsPlanted(t *testing.T) {
	if testing.Short() {
		t.Skip("reads ml-latest-small")
	}
	path := testdata.Path(t, "ml-latest-small/ratings.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	real, err := ReadRatingsText(path, f)
	if err != nil {
		t.Fatal(err)
	}
	const T = 100
	ra := ActivityOf(real, T)
	lo, hi := real[0].Timestamp, real[0].Timestamp
	for _, r := range real {
		lo, hi = min(lo, r.Timestamp), max(hi, r.Timestamp)
	}
	cfg := PlantedConfig{Users: ra.Users, Items: ra.Items, Ratings: ra.Ratings, Bins: T, D: 10, Seed: 1,
		Start: time.Unix(lo, 0), End: time.Unix(hi, 0), Drift: 0.1, Pool: optim.NewPool(2)}
	var buf bytes.Buffer
	if _, err := Generate(context.Background(), &buf, nil, cfg); err != nil {
		t.Fatal(err)
	}
	gen, err := ReadRatingsText("generated", &buf)
	if err != nil {
		t.Fatal(err)
	}
	ga := ActivityOf(gen, T)
	bursty := cfg
	bursty.ActiveBinsMean = ActiveBinsSmall
	buf.Reset()
	if _, err := Generate(context.Background(), &buf, nil, bursty); err != nil {
		t.Fatal(err)
	}
	genB, err := ReadRatingsText("generated", &buf)
	if err != nil {
		t.Fatal(err)
	}
	ba := ActivityOf(genB, T)
	t.Logf("\n%s", ActivityTable([]string{"ml-latest-small", "planted, spread (ActiveBinsMean 0)", "planted, bursty (ActiveBinsMean 2.55)"}, []Activity{ra, ga, ba}))
	// The bursty generator matches the real activity per user to within a
	// fifth (mean active bins) and is bursty like it (median ratings per
	// active (user, bin) at least 10, not 2).
	if m := ba.BinsPerUser.Mean; m < 0.8*ra.BinsPerUser.Mean || m > 1.2*ra.BinsPerUser.Mean || ba.PerUserBin.Median < 10 {
		t.Errorf("bursty generator: bins per user %+v, per (user, bin) %+v; real %+v, %+v", ba.BinsPerUser, ba.PerUserBin, ra.BinsPerUser, ra.PerUserBin)
	}
	// Measured on ml-latest-small (100,836 ratings, 610 users): the median
	// user is active in 1 bin of 100, with 25 ratings there.
	if ra.Ratings != 100836 || ra.Users != 610 || ra.BinsPerUser.Median != 1 || ra.PerUserBin.Median != 25 {
		t.Errorf("ml-latest-small statistics changed: %d ratings, %d users, bins per user %+v, per (user, bin) %+v",
			ra.Ratings, ra.Users, ra.BinsPerUser, ra.PerUserBin)
	}
	// Today's generator spreads users over the bins: many active bins, few
	// ratings in each (what the calibration has to change).
	if !(ga.BinsPerUser.Median > 10*ra.BinsPerUser.Median && ga.PerUserBin.Median < ra.PerUserBin.Median/5) {
		t.Logf("the generator is no longer spread out like before: update this test and the notes")
	}
}

func TestBurstyGeneratorDeterministicAndChecked(t *testing.T) {
	cfg := PlantedConfig{Users: 50, Items: 40, Ratings: 3000, Bins: 20, D: 3, Seed: 7,
		Start: time.Unix(0, 0), End: time.Unix(1e6, 0), Drift: 0.1, ActiveBinsMean: 2}
	gen := func(workers int) []byte {
		c := cfg
		c.Pool = optim.NewPool(workers)
		defer c.Pool.Close()
		var b bytes.Buffer
		if _, err := Generate(context.Background(), &b, nil, c); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := gen(1), gen(3)
	if !bytes.Equal(a, b) {
		t.Fatal("bursty generator: bytes differ between 1 and 3 workers")
	}
	rs, err := ReadRatingsText("gen", bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if act := ActivityOf(rs, cfg.Bins); act.BinsPerUser.Max >= float64(cfg.Bins) || act.Ratings != cfg.Ratings {
		t.Errorf("bursty activity %+v", act)
	}
	cfg.ActiveBinsMean = 0.5
	if _, err := Generate(context.Background(), &bytes.Buffer{}, nil, cfg); err == nil || !strings.Contains(err.Error(), "ActiveBinsMean") {
		t.Errorf("ActiveBinsMean 0.5 accepted: %v", err)
	}
}
