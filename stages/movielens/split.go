package movielens

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"goldstone/formats/ratings"
)

// splitStream is the PCG stream of Split's shuffle, so that the same seed used elsewhere
// gives an independent sequence.
const splitStream = 0x73706c6974 // "split"

// SplitStats gives the row counts of the three parts.
type SplitStats struct {
	Train, Valid, Test int64
}

// SplitCounts returns the exact part sizes for n rows: train = floor(f0*n),
// train+valid = floor((f0+f1)*n) (clamped to n), test the rest.
func SplitCounts(n int64, fractions [3]float64) (SplitStats, error) {
	sum := 0.0
	for _, f := range fractions {
		if !(f >= 0 && f <= 1) {
			return SplitStats{}, fmt.Errorf("split: fractions %v: each must be in [0, 1]", fractions)
		}
		sum += f
	}
	if math.Abs(sum-1) > 1e-9 {
		return SplitStats{}, fmt.Errorf("split: fractions %v sum to %v, want 1", fractions, sum)
	}
	c1 := min(int64(math.Floor(fractions[0]*float64(n))), n)
	c2 := min(int64(math.Floor((fractions[0]+fractions[1])*float64(n))), n)
	c2 = max(c2, c1)
	return SplitStats{Train: c1, Valid: c2 - c1, Test: n - c2}, nil
}

// Split reads a Binned table src and writes its rows into three Binned tables, each in src's
// order: a seeded uniformly random assignment with exact sizes SplitCounts(n, fractions),
// across all bins. The assignment is the array of n labels (Train times 0, Valid times 1,
// Test times 2) shuffled by Fisher-Yates with rand.New(rand.NewPCG(seed, splitStream));
// row r goes to the part of label r. Same src and seed give identical files. Memory: one byte
// per row. Each output file is written atomically.
func Split(ctx context.Context, src, dstTrain, dstValid, dstTest string, fractions [3]float64, seed uint64) (SplitStats, error) {
	n, err := ratings.NumRows(src)
	if err != nil {
		return SplitStats{}, fmt.Errorf("split: %w", err)
	}
	want, err := SplitCounts(n, fractions)
	if err != nil {
		return SplitStats{}, err
	}
	labels := make([]int8, n)
	for i := want.Train; i < want.Train+want.Valid; i++ {
		labels[i] = 1
	}
	for i := want.Train + want.Valid; i < n; i++ {
		labels[i] = 2
	}
	rng := rand.New(rand.NewPCG(seed, splitStream))
	rng.Shuffle(len(labels), func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })

	var got SplitStats
	err = ratings.WriteTable(dstTrain, 0, func(wTrain *ratings.TableWriter[ratings.Binned]) error {
		return ratings.WriteTable(dstValid, 0, func(wValid *ratings.TableWriter[ratings.Binned]) error {
			return ratings.WriteTable(dstTest, 0, func(wTest *ratings.TableWriter[ratings.Binned]) error {
				ws := [3]*ratings.TableWriter[ratings.Binned]{wTrain, wValid, wTest}
				var bufs [3][]ratings.Binned
				var row int64
				return ratings.Read(ctx, src, func(rows []ratings.Binned) error {
					for k := range bufs {
						bufs[k] = bufs[k][:0]
					}
					for _, r := range rows {
						if row >= n {
							return fmt.Errorf("split %s: more rows than the footer's %d", src, n)
						}
						l := labels[row]
						bufs[l] = append(bufs[l], r)
						row++
					}
					for k, w := range ws {
						if _, err := w.Write(bufs[k]); err != nil {
							return fmt.Errorf("split: write: %w", err)
						}
					}
					got.Train += int64(len(bufs[0]))
					got.Valid += int64(len(bufs[1]))
					got.Test += int64(len(bufs[2]))
					return nil
				})
			})
		})
	})
	if err != nil {
		return SplitStats{}, err
	}
	if got != want {
		return SplitStats{}, fmt.Errorf("split %s: wrote %+v, want %+v", src, got, want)
	}
	return got, nil
}
