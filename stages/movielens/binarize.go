package movielens

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"goldstone/formats/ratings"
)

// BinarizeStats describes a binarization. Its JSON is the binarize stage's
// binarize.json; Ties and Tied are written only when the ties are kept (so the file of
// the paper's default, ties dropped, is as it was).
type BinarizeStats struct {
	Median   float64 `json:"median"`         // exact median of all input ratings
	Ratings  int64   `json:"ratings"`        // input rows
	Positive int64   `json:"positive"`       // rows kept with x = +1 (above the median, and ties with Ties positive)
	Negative int64   `json:"negative"`       // rows kept with x = -1 (below the median, and ties with Ties negative)
	Dropped  int64   `json:"dropped"`        // rows equal to the median, dropped (Ties drop)
	Ties     Ties    `json:"ties,omitempty"` // what became of the ratings equal to the median, when they were kept
	Tied     int64   `json:"tied,omitempty"` // rows equal to the median, when they were kept
}

// Kept is the number of rows kept, Positive + Negative.
func (st BinarizeStats) Kept() int64 { return st.Positive + st.Negative }

// Ties says what becomes of the ratings equal to the median (the setting binarize_ties).
type Ties string

const (
	TiesDrop     Ties = "drop"     // dropped, as the paper does (the default)
	TiesPositive Ties = "positive" // x = +1
	TiesNegative Ties = "negative" // x = -1
)

// label returns x for a rating v given the median: +1 above, -1 below, and for a tie
// +1, -1 or 0 (dropped) as t says.
func (t Ties) label(v, med float64) int8 {
	switch {
	case v > med:
		return 1
	case v < med:
		return -1
	case t == TiesPositive:
		return 1
	case t == TiesNegative:
		return -1
	}
	return 0
}

// BinarizeSettings are the binarize stage's settings.
type BinarizeSettings struct {
	Ties      Ties    `set:"binarize_ties" default:"drop" oneof:"drop positive negative" doc:"what becomes of the ratings equal to the median when ratings are binarized: drop them (the paper's choice), or count them as positive or as negative"`
	WarnShare float64 `set:"binarize_warn_share" default:"0.25" check:"[0,1)" doc:"warn (also with --quiet) when binarize drops more than this share of the ratings as ties"`
}

// PruneKeys keeps binarize_ties in the keys only when the ties are kept (the
// paper's binarization keeps its trial ids and cache keys) and leaves
// binarize_warn_share out of every key (it changes no output).
func (s BinarizeSettings) PruneKeys(m map[string]any) {
	if s.Ties == TiesDrop || s.Ties == "" {
		delete(m, "binarize_ties")
	}
	delete(m, "binarize_warn_share")
}

// CountBinarize returns the counts of a binarization of the ratings given as value ->
// count with ties t, without the rows.
func CountBinarize(hist map[float32]int64, t Ties) (BinarizeStats, error) {
	med, err := Median(hist)
	if err != nil {
		return BinarizeStats{}, err
	}
	st := BinarizeStats{Median: med}
	for v, c := range hist {
		st.Ratings += c
		switch x := t.label(float64(v), med); {
		case x > 0:
			st.Positive += c
		case x < 0:
			st.Negative += c
		default:
			st.Dropped += c
		}
		if float64(v) == med && t != TiesDrop && t != "" {
			st.Ties, st.Tied = t, st.Tied+c
		}
	}
	return st, nil
}

// Binarizable checks that the binarization st (with ties t, of the ratings hist) keeps
// ratings of both labels, as a logistic model needs; else its error says what the data
// is and which setting to change: binarize_ties where another value keeps both labels,
// else likelihood = "gaussian".
func Binarizable(hist map[float32]int64, t Ties) error {
	st, err := CountBinarize(hist, t)
	if err != nil {
		return fmt.Errorf("cannot binarize: %w", err)
	}
	if st.Positive > 0 && st.Negative > 0 {
		return nil
	}
	if t == "" {
		t = TiesDrop
	}
	tied := st.Dropped + st.Tied
	var what string
	switch {
	case tied == st.Ratings:
		what = fmt.Sprintf("all %d ratings equal the median %v", st.Ratings, st.Median)
	case t == TiesDrop:
		what = fmt.Sprintf("%d of %d ratings equal the median %v and are dropped (binarize_ties = %q), leaving %d positive and %d negative", tied, st.Ratings, st.Median, t, st.Positive, st.Negative)
	default:
		what = fmt.Sprintf("%d of %d ratings equal the median %v and count as %s (binarize_ties = %q), leaving %d positive and %d negative", tied, st.Ratings, st.Median, t, t, st.Positive, st.Negative)
	}
	var fixes []string
	for _, o := range []Ties{TiesDrop, TiesPositive, TiesNegative} {
		if o == t {
			continue
		}
		if ost, _ := CountBinarize(hist, o); ost.Positive > 0 && ost.Negative > 0 {
			fixes = append(fixes, fmt.Sprintf("binarize_ties = %q (%d positive, %d negative)", o, ost.Positive, ost.Negative))
		}
	}
	fix := `a logistic likelihood needs ratings on both sides of the median: use likelihood = "gaussian" to keep them as rated`
	if len(fixes) > 0 {
		fix = "set " + strings.Join(fixes, " or ") + `, or likelihood = "gaussian" to keep the ratings as rated`
	}
	return fmt.Errorf("cannot binarize at the median: %s; %s", what, fix)
}

// Median returns the exact median of a multiset given as value -> count. With an odd total it
// is the middle value; with an even total it is the mean of the two middle values (when they
// differ no value of the multiset equals it, since they are adjacent in sorted order).
func Median(hist map[float32]int64) (float64, error) {
	var n int64
	keys := make([]float32, 0, len(hist))
	for v, c := range hist {
		if c < 0 {
			return 0, fmt.Errorf("median: negative count %d for %v", c, v)
		}
		if c > 0 {
			keys = append(keys, v)
			n += c
		}
	}
	if n == 0 {
		return 0, errors.New("median: no values")
	}
	slices.Sort(keys)
	at := func(k int64) float32 { // k-th smallest, 0-based
		for _, v := range keys {
			if k < hist[v] {
				return v
			}
			k -= hist[v]
		}
		panic("movielens: median index out of range")
	}
	if n%2 == 1 {
		return float64(at(n / 2)), nil
	}
	return (float64(at(n/2-1)) + float64(at(n/2))) / 2, nil
}

// BinarizeOptions tune Binarize. The zero value is the paper's binarization.
type BinarizeOptions struct {
	Ties Ties   // what becomes of the ratings equal to the median; "": TiesDrop
	Name string // the data set, in errors (the ingested table is a cache file); "": src
}

// Binarize reads a Rating table src, computes the exact median of all ratings (see Median),
// drops the ratings equal to it and writes the Binary table dst with x = +1 for ratings above
// the median and x = -1 below (and the rating beside it), in input order. It reads src twice; memory holds one count per
// distinct rating value (ten for half stars).
func Binarize(ctx context.Context, src, dst string) (BinarizeStats, error) {
	return BinarizeWith(ctx, src, dst, BinarizeOptions{})
}

// BinarizeWith is Binarize with the ratings equal to the median dropped or labelled as
// opt.Ties says. Ratings that cannot be binarized (Binarizable: every kept rating of one
// label) are an error naming opt.Name, before dst is written.
func BinarizeWith(ctx context.Context, src, dst string, opt BinarizeOptions) (BinarizeStats, error) {
	ties := opt.Ties
	if ties == "" {
		ties = TiesDrop
	}
	name := opt.Name
	if name == "" {
		name = src
	}
	hist := map[float32]int64{}
	err := ratings.Read(ctx, src, func(rows []ratings.Rating) error {
		for i := range rows {
			hist[rows[i].Rating]++
		}
		return nil
	})
	if err != nil {
		return BinarizeStats{}, fmt.Errorf("binarize: %w", err)
	}
	if err := Binarizable(hist, ties); err != nil {
		return BinarizeStats{}, fmt.Errorf("binarize %s: %w", name, err)
	}
	want, err := CountBinarize(hist, ties)
	if err != nil {
		return BinarizeStats{}, fmt.Errorf("binarize %s: %w", name, err)
	}
	med := want.Median
	st := BinarizeStats{Median: med}
	err = ratings.WriteTable(dst, 0, func(w *ratings.TableWriter[ratings.Binary]) error {
		out := make([]ratings.Binary, 0, ratings.ReadBatch)
		return ratings.Read(ctx, src, func(rows []ratings.Rating) error {
			out = out[:0]
			for _, r := range rows {
				v := float64(r.Rating)
				switch x := ties.label(v, med); x {
				case 0:
					st.Dropped++
				default:
					out = append(out, ratings.Binary{User: r.User, Item: r.Item, X: x, Rating: r.Rating, Timestamp: r.Timestamp})
					if x > 0 {
						st.Positive++
					} else {
						st.Negative++
					}
				}
				if v == med && ties != TiesDrop {
					st.Ties, st.Tied = ties, st.Tied+1
				}
			}
			st.Ratings += int64(len(rows))
			if _, err := w.Write(out); err != nil {
				return fmt.Errorf("binarize: write %s: %w", dst, err)
			}
			return nil
		})
	})
	if err != nil {
		return BinarizeStats{}, err
	}
	return st, nil
}
