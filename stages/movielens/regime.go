package movielens

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"goldstone/report"
	"goldstone/trialio"
)

// Regime says how densely a binned ratings table pins its time steps: the
// quantities that decide whether the paper's slow gauge modes can form at
// all (issue 27). With about one rating per item and bin, no bin's frame is
// pinned by its own data, the prior alone sets the vectors, and no slow
// twist can build up; the paper's MovieLens 20M has about 180,000 ratings
// per bin.
type Regime struct {
	Bins    int   `json:"bins"`
	Ratings int64 `json:"ratings"`
	// PerBin: ratings per bin, over all T bins (empty ones count as 0).
	PerBin Spread `json:"per_bin"`
	// BinsPerUser: active bins per user (users with a rating).
	BinsPerUser Spread `json:"bins_per_user"`
	// PerItemBin: ratings per active (item, bin) pair.
	PerItemBin Spread `json:"per_item_bin"`
	// BusiestShare is the share of all ratings in the busiest tenth of
	// the bins (ceil(T/10) bins); 0.1 when every bin holds as many.
	BusiestShare float64 `json:"busiest_share"`
}

// Spread summarises a distribution of counts by its quartiles (nearest
// rank), extremes and mean.
type Spread struct {
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
}

// spreadOf sorts xs in place and returns its spread (NaN fields when
// empty). The mean is summed in sorted order, so it does not depend on
// the order the counts were gathered in.
func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		nan := math.NaN()
		return Spread{nan, nan, nan, nan, nan, nan}
	}
	slices.Sort(xs)
	var s float64
	for _, x := range xs {
		s += x
	}
	at := func(p float64) float64 { return xs[max(int(math.Ceil(p*float64(len(xs))))-1, 0)] }
	return Spread{Min: xs[0], Q1: at(0.25), Median: at(0.5), Q3: at(0.75), Max: xs[len(xs)-1], Mean: s / float64(len(xs))}
}

// regimeCounter gathers a Regime while a table is binned: per-bin counts,
// the bins each user is active in, and the count of every (item, bin)
// pair. Memory: T*U bits and T*I 32-bit counts.
type regimeCounter struct {
	T, U, I int
	perBin  []int64
	activeU []uint64 // bit t*U+u: user u rated in bin t
	itemBin []uint32 // t*I+i: ratings of item i in bin t
}

func newRegimeCounter(T, U, I int) *regimeCounter {
	return &regimeCounter{T: T, U: U, I: I, perBin: make([]int64, T),
		activeU: make([]uint64, (T*U+63)/64), itemBin: make([]uint32, T*I)}
}

func (c *regimeCounter) add(t, u, i int) {
	c.perBin[t]++
	setBit(c.activeU, t*c.U+u)
	c.itemBin[t*c.I+i]++
}

// usersIn and itemsIn count the active users and items of bin t.
func (c *regimeCounter) usersIn(t int) int { return countBits(c.activeU, t*c.U, (t+1)*c.U) }
func (c *regimeCounter) itemsIn(t int) int {
	n := 0
	for _, k := range c.itemBin[t*c.I : (t+1)*c.I] {
		if k > 0 {
			n++
		}
	}
	return n
}

func (c *regimeCounter) regime() Regime {
	r := Regime{Bins: c.T}
	perBin := make([]float64, c.T)
	for t, n := range c.perBin {
		perBin[t] = float64(n)
		r.Ratings += n
	}
	binsOf := make([]float64, c.U)
	for t := range c.T {
		for u := range c.U {
			if c.activeU[(t*c.U+u)>>6]&(1<<(uint(t*c.U+u)&63)) != 0 {
				binsOf[u]++
			}
		}
	}
	users := binsOf[:0]
	for _, n := range binsOf {
		if n > 0 {
			users = append(users, n)
		}
	}
	var pairs []float64
	for _, n := range c.itemBin {
		if n > 0 {
			pairs = append(pairs, float64(n))
		}
	}
	r.PerBin = spreadOf(perBin) // sorts perBin ascending
	if r.Ratings > 0 {
		k := (c.T + 9) / 10
		var top float64
		for _, n := range perBin[c.T-k:] {
			top += n
		}
		r.BusiestShare = top / float64(r.Ratings)
	}
	r.BinsPerUser, r.PerItemBin = spreadOf(users), spreadOf(pairs)
	return r
}

// Summary returns the regime as summary metrics (data_* names), the form
// in which every trial of a ratings experiment records the density of the
// data it was trained on.
func (r Regime) Summary() map[string]float64 {
	m := map[string]float64{
		"data_ratings":       float64(r.Ratings),
		"data_bins":          float64(r.Bins),
		"data_busiest_share": r.BusiestShare,
	}
	for name, s := range map[string]Spread{"per_bin": r.PerBin, "bins_per_user": r.BinsPerUser, "per_item_bin": r.PerItemBin} {
		m["data_"+name+"_q1"], m["data_"+name+"_median"], m["data_"+name+"_q3"] = s.Q1, s.Median, s.Q3
	}
	return m
}

// trainedSummary reads the summary of the model trained in mdir and adds
// the regime of the data it was trained on (the bin stage's info.json in
// binned) as data_* metrics.
func trainedSummary(mdir, binned string) (trialio.Summary, error) {
	sum, err := trialio.ReadSummary(filepath.Join(mdir, "summary.json"))
	if err != nil {
		return nil, err
	}
	var info binInfo
	if err := trialio.ReadJSON(filepath.Join(binned, "info.json"), &info); err != nil {
		return nil, err
	}
	maps.Copy(sum, info.Regime.Summary())
	return sum, nil
}

// RegimeOf reads a trial's regime back from its data_* summary metrics
// (Summary's inverse for the fields it records; ok is false when the
// trial has none, e.g. a result made before they existed).
func RegimeOf(sum map[string]float64) (r Regime, ok bool) {
	n, ok := sum["data_ratings"]
	if !ok {
		return Regime{}, false
	}
	r.Ratings, r.Bins, r.BusiestShare = int64(n), int(sum["data_bins"]), sum["data_busiest_share"]
	for name, s := range map[string]*Spread{"per_bin": &r.PerBin, "bins_per_user": &r.BinsPerUser, "per_item_bin": &r.PerItemBin} {
		s.Q1, s.Median, s.Q3 = sum["data_"+name+"_q1"], sum["data_"+name+"_median"], sum["data_"+name+"_q3"]
	}
	return r, true
}

// RegimeTable is the report's section on the density of the data the
// trials were trained on: one row per distinct regime (binarized and
// explicit ratings are binned from different tables), with the trials
// that share it. Empty when no trial recorded one.
func RegimeTable(all []report.TrialResult) string {
	type group struct {
		r     Regime
		names []string
	}
	var gs []*group
	for _, tr := range all {
		r, ok := RegimeOf(tr.Summary)
		if !ok {
			continue
		}
		i := slices.IndexFunc(gs, func(g *group) bool { return g.r == r })
		if i < 0 {
			gs = append(gs, &group{r: r})
			i = len(gs) - 1
		}
		gs[i].names = append(gs[i].names, report.VariantName(tr.Trial))
	}
	if len(gs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Data regime\n\n")
	b.WriteString("How densely the data pins each time bin (medians, quartiles in brackets). The paper's MovieLens 20M has about " +
		"180,000 ratings per bin; with about one rating per active item and bin, no bin's frame is pinned by its own data and " +
		"no slow gauge mode can form.\n\n")
	b.WriteString("| trials | ratings | bins | ratings per bin | active bins per user | ratings per active item and bin | busiest tenth of bins |\n|---|---|---|---|---|---|---|\n")
	sp := func(s Spread) string { return fmt.Sprintf("%.4g (%.4g to %.4g)", s.Median, s.Q1, s.Q3) }
	for _, g := range gs {
		slices.Sort(g.names)
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %.1f%% |\n", report.MarkdownText(strings.Join(slices.Compact(g.names), ", ")),
			g.r.Ratings, g.r.Bins, sp(g.r.PerBin), sp(g.r.BinsPerUser), sp(g.r.PerItemBin), 100*g.r.BusiestShare)
	}
	return b.String()
}
