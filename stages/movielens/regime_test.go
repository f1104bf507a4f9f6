package movielens

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/experiment"
	"goldstone/report"
)

// TestRegimeCounts checks the regime of a hand-made table: 3 bins, two
// users, two items.
func TestRegimeCounts(t *testing.T) {
	c := newRegimeCounter(3, 2, 2)
	// bin 0: u0 rates i0 three times and i1 once; bin 1: u1 rates i0; bin 2 empty.
	for _, r := range [][3]int{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 1}, {1, 1, 0}} {
		c.add(r[0], r[1], r[2])
	}
	r := c.regime()
	if r.Ratings != 5 || r.Bins != 3 {
		t.Fatalf("ratings %d bins %d", r.Ratings, r.Bins)
	}
	// per bin: 0, 1, 4
	if r.PerBin != (Spread{Min: 0, Q1: 0, Median: 1, Q3: 4, Max: 4, Mean: 5.0 / 3}) {
		t.Errorf("per bin: %+v", r.PerBin)
	}
	// bins per user: 1, 1
	if r.BinsPerUser.Median != 1 || r.BinsPerUser.Max != 1 {
		t.Errorf("bins per user: %+v", r.BinsPerUser)
	}
	// item-bin pairs: (i0,b0)=3, (i1,b0)=1, (i0,b1)=1
	if r.PerItemBin != (Spread{Min: 1, Q1: 1, Median: 1, Q3: 3, Max: 3, Mean: 5.0 / 3}) {
		t.Errorf("per item-bin: %+v", r.PerItemBin)
	}
	// the busiest tenth of 3 bins is one bin: 4 of 5 ratings
	if r.BusiestShare != 0.8 {
		t.Errorf("busiest share %v, want 0.8", r.BusiestShare)
	}
	if c.usersIn(0) != 1 || c.itemsIn(0) != 2 || c.usersIn(2) != 0 || c.itemsIn(2) != 0 {
		t.Errorf("bin 0: %d users %d items; bin 2: %d users %d items", c.usersIn(0), c.itemsIn(0), c.usersIn(2), c.itemsIn(2))
	}
	sum := r.Summary()
	if sum["data_per_item_bin_median"] != 1 || sum["data_per_bin_q3"] != 4 || sum["data_busiest_share"] != 0.8 || sum["data_ratings"] != 5 {
		t.Errorf("summary %v", sum)
	}
	back, ok := RegimeOf(sum)
	want := r
	want.PerBin, want.BinsPerUser, want.PerItemBin = quartiles(r.PerBin), quartiles(r.BinsPerUser), quartiles(r.PerItemBin)
	if !ok || back != want {
		t.Errorf("RegimeOf(Summary()) = %+v, %v; want %+v", back, ok, want)
	}
	all := []report.TrialResult{
		{Trial: experiment.Trial{ID: "1", Name: "a", Variant: "adagrad"}, Summary: sum},
		{Trial: experiment.Trial{ID: "2", Name: "b", Variant: "goldstone"}, Summary: sum},
		{Trial: experiment.Trial{ID: "3", Name: "c", Variant: "old"}, Summary: map[string]float64{"final_psi": 1}},
	}
	md := RegimeTable(all)
	if !strings.Contains(md, "| adagrad, goldstone | 5 | 3 | 1 (0 to 4) | 1 (1 to 1) | 1 (1 to 3) | 80.0% |") || strings.Count(md, "\n| ") != 2 {
		t.Errorf("regime table:\n%s", md)
	}
	if md := RegimeTable(all[2:]); md != "" {
		t.Errorf("regime table without regimes: %q", md)
	}
	if tab := report.MarkdownTable("t", all[:1]); strings.Contains(tab, "data_") {
		t.Errorf("the summary table lists the data's metrics:\n%s", tab)
	}
}

// TestBinRegime: the regime Bin returns agrees with one counted from the
// binned rows themselves, and the per-bin user and item counts with it.
func TestBinRegime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := smallBinary(t, dir, 500)
	dst := filepath.Join(dir, "binned.parquet")
	res, err := Bin(ctx, src, dst, 7)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ratings.ReadAll[ratings.Binned](ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ a, b int32 }
	perBin := make([]float64, 7)
	itemBin, userBin := map[key]float64{}, map[key]bool{}
	binsOf := map[int32]float64{}
	for _, r := range rows {
		perBin[r.Bin]++
		itemBin[key{r.Item, r.Bin}]++
		if !userBin[key{r.User, r.Bin}] {
			userBin[key{r.User, r.Bin}] = true
			binsOf[r.User]++
		}
	}
	var pairs, bins []float64
	for _, n := range itemBin {
		pairs = append(pairs, n)
	}
	for _, n := range binsOf {
		bins = append(bins, n)
	}
	sorted := slices.Clone(perBin)
	slices.Sort(sorted)
	want := Regime{Bins: 7, Ratings: int64(len(rows)), PerBin: spreadOf(slices.Clone(perBin)), BinsPerUser: spreadOf(bins), PerItemBin: spreadOf(pairs),
		BusiestShare: sorted[6] / float64(len(rows))}
	if !regimeEqual(res.Regime, want) {
		t.Errorf("regime\n got %+v\nwant %+v", res.Regime, want)
	}
	for tb, b := range res.Bins {
		if b.Ratings != int64(perBin[tb]) {
			t.Errorf("bin %d: %d ratings, counted %v", tb, b.Ratings, perBin[tb])
		}
	}
}

// quartiles keeps the fields Summary records.
func quartiles(s Spread) Spread { return Spread{Q1: s.Q1, Median: s.Median, Q3: s.Q3} }

func regimeEqual(a, b Regime) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y)) }
	sp := func(x, y Spread) bool {
		return x.Min == y.Min && x.Q1 == y.Q1 && x.Median == y.Median && x.Q3 == y.Q3 && x.Max == y.Max && near(x.Mean, y.Mean)
	}
	return a.Bins == b.Bins && a.Ratings == b.Ratings && sp(a.PerBin, b.PerBin) && sp(a.BinsPerUser, b.BinsPerUser) &&
		sp(a.PerItemBin, b.PerItemBin) && near(a.BusiestShare, b.BusiestShare)
}
