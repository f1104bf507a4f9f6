package movielens

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// BinarizeStats describes a binarization.
type BinarizeStats struct {
	Median   float64 `json:"median"`   // exact median of all input ratings
	Ratings  int64   `json:"ratings"`  // input rows
	Positive int64   `json:"positive"` // rows kept with x = +1 (above the median)
	Negative int64   `json:"negative"` // rows kept with x = -1 (below the median)
	Dropped  int64   `json:"dropped"`  // rows equal to the median
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

// Binarize reads a Rating table src, computes the exact median of all ratings (see Median),
// drops the ratings equal to it and writes the Binary table dst with x = +1 for ratings above
// the median and x = -1 below (and the rating beside it), in input order. It reads src twice; memory holds one count per
// distinct rating value (ten for half stars).
func Binarize(ctx context.Context, src, dst string) (BinarizeStats, error) {
	hist := map[float32]int64{}
	err := Read(ctx, src, func(rows []Rating) error {
		for i := range rows {
			hist[rows[i].Rating]++
		}
		return nil
	})
	if err != nil {
		return BinarizeStats{}, fmt.Errorf("binarize: %w", err)
	}
	med, err := Median(hist)
	if err != nil {
		return BinarizeStats{}, fmt.Errorf("binarize %s: %w", src, err)
	}
	st := BinarizeStats{Median: med}
	err = writeTable(dst, 0, func(w *tableWriter[Binary]) error {
		out := make([]Binary, 0, readBatch)
		return Read(ctx, src, func(rows []Rating) error {
			out = out[:0]
			for _, r := range rows {
				v := float64(r.Rating)
				switch {
				case v > med:
					out = append(out, Binary{User: r.User, Item: r.Item, X: 1, Rating: r.Rating, Timestamp: r.Timestamp})
					st.Positive++
				case v < med:
					out = append(out, Binary{User: r.User, Item: r.Item, X: -1, Rating: r.Rating, Timestamp: r.Timestamp})
					st.Negative++
				default:
					st.Dropped++
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
