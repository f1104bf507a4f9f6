package movielens

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"goldstone/formats/ratings"
)

// Activity are the statistics of a ratings table that the planted generator
// is to be calibrated to (issue 10): how bursty users are and how
// heavy-tailed item popularity is, on T bins of equal duration over the
// table's time span.
type Activity struct {
	Ratings      int64
	Users, Items int // with at least one rating
	Bins         int
	// PerUserBin: ratings per active (user, bin) pair.
	PerUserBin Quantiles
	// BinsPerUser: active bins per user.
	BinsPerUser Quantiles
	// PerItem: ratings per item (items with at least one).
	PerItem Quantiles
}

// Quantiles summarise a distribution of counts.
type Quantiles struct {
	Mean, Median, P90, Max float64
}

func quantilesOf(xs []float64) Quantiles {
	if len(xs) == 0 {
		return Quantiles{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	}
	slices.Sort(xs)
	var s float64
	for _, x := range xs {
		s += x
	}
	at := func(p float64) float64 { // nearest rank
		k := int(math.Ceil(p*float64(len(xs)))) - 1
		return xs[max(k, 0)]
	}
	return Quantiles{Mean: s / float64(len(xs)), Median: at(0.5), P90: at(0.9), Max: xs[len(xs)-1]}
}

// ActivityOf computes the statistics of ratings on T bins of equal duration
// over [min, max] timestamp (BinOf).
func ActivityOf(ratings []ratings.Rating, T int) Activity {
	a := Activity{Ratings: int64(len(ratings)), Bins: T}
	if len(ratings) == 0 {
		a.PerUserBin, a.BinsPerUser, a.PerItem = quantilesOf(nil), quantilesOf(nil), quantilesOf(nil)
		return a
	}
	lo, hi := ratings[0].Timestamp, ratings[0].Timestamp
	for _, r := range ratings {
		lo, hi = min(lo, r.Timestamp), max(hi, r.Timestamp)
	}
	type ub struct {
		u int32
		b int
	}
	perUB := map[ub]float64{}
	perItem := map[int32]float64{}
	for _, r := range ratings {
		perUB[ub{r.User, BinOf(r.Timestamp, lo, hi, T)}]++
		perItem[r.Item]++
	}
	binsOf := map[int32]float64{}
	var ubs, items, bins []float64
	for k, n := range perUB {
		ubs = append(ubs, n)
		binsOf[k.u]++
	}
	for _, n := range binsOf {
		bins = append(bins, n)
	}
	for _, n := range perItem {
		items = append(items, n)
	}
	a.Users, a.Items = len(binsOf), len(perItem)
	a.PerUserBin, a.BinsPerUser, a.PerItem = quantilesOf(ubs), quantilesOf(bins), quantilesOf(items)
	return a
}

// ReadRatingsText parses a ratings file in any supported format (already
// decompressed), naming the line of a bad record.
func ReadRatingsText(name string, r io.Reader) ([]ratings.Rating, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4096)
	f, err := ratings.DetectFormat(head)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var out []ratings.Rating
	line, header := 0, f.Layout().Header
	for sc.Scan() {
		line++
		b := bytes.TrimPrefix(sc.Bytes(), ratings.UTF8BOM)
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if header {
			header = false
			continue
		}
		rt, err := ratings.ParseLine(f, b)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, rt)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// ActivityTable renders activity statistics side by side (one column per
// data set) as Markdown.
func ActivityTable(names []string, acts []Activity) string {
	var b strings.Builder
	b.WriteString("| statistic | " + strings.Join(names, " | ") + " |\n|---|" + strings.Repeat("---|", len(names)) + "\n")
	row := func(label string, f func(a Activity) string) {
		b.WriteString("| " + label + " |")
		for _, a := range acts {
			b.WriteString(" " + f(a) + " |")
		}
		b.WriteString("\n")
	}
	row("ratings", func(a Activity) string { return fmt.Sprint(a.Ratings) })
	row("users / items / bins", func(a Activity) string { return fmt.Sprintf("%d / %d / %d", a.Users, a.Items, a.Bins) })
	q := func(label string, get func(a Activity) Quantiles) {
		row(label+": mean / median / p90 / max", func(a Activity) string {
			x := get(a)
			return fmt.Sprintf("%.3g / %.3g / %.3g / %.3g", x.Mean, x.Median, x.P90, x.Max)
		})
	}
	q("ratings per active (user, bin)", func(a Activity) Quantiles { return a.PerUserBin })
	q("active bins per user", func(a Activity) Quantiles { return a.BinsPerUser })
	q("ratings per item", func(a Activity) Quantiles { return a.PerItem })
	return b.String()
}
