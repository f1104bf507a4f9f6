package ratings

import (
	"context"
	"fmt"
)

// dupKey is the identity of a row for the duplicates policy.
type dupKey struct {
	user, item int32
	ts         int64
}

// dropDuplicates writes dst from the Rating table raw without the rows that a later row
// repeats (same user, item and time): the last of each group is kept. rep holds the row
// hashes that occur more than once; only rows with such a hash are compared (a hash
// collision of different rows keeps both). It updates c's Stats.
func dropDuplicates(ctx context.Context, raw, dst string, rowGroup int, rep map[uint64]struct{}, c *collector) error {
	type group struct{ n, last int64 }
	groups := map[dupKey]*group{}
	var row int64
	err := Read(ctx, raw, func(rows []Rating) error {
		for _, r := range rows {
			if _, ok := rep[rowHash(r.User, r.Item, r.Timestamp)]; ok {
				k := dupKey{r.User, r.Item, r.Timestamp}
				g := groups[k]
				if g == nil {
					g = &group{}
					groups[k] = g
				}
				g.n++
				g.last = row
			}
			row++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("duplicates: %w", err)
	}
	st := c.st
	row = 0
	return WriteTable(dst, rowGroup, func(w *TableWriter[Rating]) error {
		out := make([]Rating, 0, ReadBatch)
		return Read(ctx, raw, func(rows []Rating) error {
			out = out[:0]
			for _, r := range rows {
				drop := false
				if _, ok := rep[rowHash(r.User, r.Item, r.Timestamp)]; ok {
					g := groups[dupKey{r.User, r.Item, r.Timestamp}]
					drop = g.n > 1 && g.last != row
				}
				row++
				if drop {
					st.Duplicates++
					st.Ratings--
					c.countTime(r.Timestamp, -1)
					continue
				}
				out = append(out, r)
			}
			if len(out) == 0 {
				return nil
			}
			if _, err := w.Write(out); err != nil {
				return fmt.Errorf("write %s: %w", dst, err)
			}
			return nil
		})
	})
}
