package movielens

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"goldstone/formats/ratings"
)

// BinOf returns the bin of timestamp ts among T bins of equal duration over [lo, hi]:
// bin t holds lo + t*(hi-lo)/T <= ts < lo + (t+1)*(hi-lo)/T (exact rational arithmetic), and
// the last bin is closed at hi. When hi == lo every timestamp is in bin 0.
// It panics unless lo <= ts <= hi and T >= 1.
func BinOf(ts, lo, hi int64, T int) int {
	if T < 1 || ts < lo || ts > hi {
		panic(fmt.Sprintf("movielens: BinOf(%d, %d, %d, %d) out of range", ts, lo, hi, T))
	}
	if hi == lo {
		return 0
	}
	ph, pl := bits.Mul64(uint64(ts-lo), uint64(T))
	q, _ := bits.Div64(ph, pl, uint64(hi-lo))
	return min(int(q), T-1)
}

// BinRange returns the integer timestamps [first, last] that BinOf puts in bin t. The range is
// empty (first > last) when hi-lo < T and bin t catches no integer.
func BinRange(t int, lo, hi int64, T int) (first, last int64) {
	if T < 1 || t < 0 || t >= T || hi < lo {
		panic(fmt.Sprintf("movielens: BinRange(%d, %d, %d, %d) out of range", t, lo, hi, T))
	}
	if hi == lo {
		if t == 0 {
			return lo, hi
		}
		return hi + 1, hi
	}
	// first = lo + ceil(t*D/T).
	ceil := func(t int) int64 {
		ph, pl := bits.Mul64(uint64(hi-lo), uint64(t))
		q, r := bits.Div64(ph, pl, uint64(T))
		if r != 0 {
			q++
		}
		return int64(q)
	}
	first = lo + ceil(t)
	if t == T-1 {
		return first, hi
	}
	return first, lo + ceil(t+1) - 1
}

// BinStats describes one time bin.
type BinStats struct {
	First, Last  int64 // integer timestamps [First, Last] in the bin (see BinRange)
	Ratings      int64
	Positive     int64 // ratings with x = +1
	Users, Items int   // distinct users and items with a rating in the bin
}

// BinResult describes a binning.
type BinResult struct {
	T                int
	MinTime, MaxTime int64 // span of the binned timestamps
	Ratings          int64
	Users, Items     []int32 // dense index -> original id, ascending ids
	Bins             []BinStats
	Regime           Regime // how densely the bins are pinned by their data
}

// IDMapPaths returns where Bin writes the id maps of dst: dst without ".parquet", plus
// ".users.parquet" and ".items.parquet".
func IDMapPaths(dst string) (users, items string) {
	base := strings.TrimSuffix(dst, ".parquet")
	return base + ".users.parquet", base + ".items.parquet"
}

// Bin reads a labelled table src (a Binary table, or a Rating table of explicit ratings: see
// ReadLabeled) and writes the Binned table dst: the timestamps are cut into
// T bins of equal duration over [min, max] of src's timestamps (see BinOf), users and items
// are re-indexed densely 0..U-1 and 0..I-1 in ascending order of their original ids, and rows
// keep src's order. The id maps (dense index -> original id) are returned and written as
// IDMap tables at IDMapPaths(dst), and the data's Regime with them. It reads src twice;
// memory holds the distinct ids, T*U bits of per-bin user activity and T*I 32-bit counts
// of ratings per item and bin.
func Bin(ctx context.Context, src, dst string, T int) (BinResult, error) {
	if T < 1 {
		return BinResult{}, fmt.Errorf("bin: T = %d, want >= 1", T)
	}
	users, items := ratings.NewIDSet(), ratings.NewIDSet()
	var n, lo, hi int64
	err := ratings.ReadLabeled(ctx, src, func(rows []ratings.Binary) error {
		for _, r := range rows {
			if n == 0 {
				lo, hi = r.Timestamp, r.Timestamp
			}
			n++
			lo, hi = min(lo, r.Timestamp), max(hi, r.Timestamp)
			users.Add(r.User)
			items.Add(r.Item)
		}
		return nil
	})
	if err != nil {
		return BinResult{}, fmt.Errorf("bin: %w", err)
	}
	if n == 0 {
		return BinResult{}, fmt.Errorf("bin %s: %w", src, errors.New("no ratings"))
	}
	res := BinResult{T: T, MinTime: lo, MaxTime: hi, Users: users.Sorted(), Items: items.Sorted(), Bins: make([]BinStats, T)}
	uidx, iidx := newIndexer(res.Users), newIndexer(res.Items)
	rc := newRegimeCounter(T, len(res.Users), len(res.Items))
	err = ratings.WriteTable(dst, 0, func(w *ratings.TableWriter[ratings.Binned]) error {
		out := make([]ratings.Binned, 0, ratings.ReadBatch)
		return ratings.ReadLabeled(ctx, src, func(rows []ratings.Binary) error {
			out = out[:0]
			for _, r := range rows {
				t := BinOf(r.Timestamp, lo, hi, T)
				u, i := uidx.index(r.User), iidx.index(r.Item)
				out = append(out, ratings.Binned{User: u, UserID: r.User, Item: i, ItemID: r.Item, X: r.X, Rating: r.Rating, Timestamp: r.Timestamp, Bin: int32(t)})
				b := &res.Bins[t]
				b.Ratings++
				if r.X > 0 {
					b.Positive++
				}
				rc.add(t, int(u), int(i))
			}
			res.Ratings += int64(len(rows))
			if _, err := w.Write(out); err != nil {
				return fmt.Errorf("bin: write %s: %w", dst, err)
			}
			return nil
		})
	})
	if err != nil {
		return BinResult{}, err
	}
	for t := range res.Bins {
		b := &res.Bins[t]
		b.First, b.Last = BinRange(t, lo, hi, T)
		b.Users, b.Items = rc.usersIn(t), rc.itemsIn(t)
	}
	res.Regime = rc.regime()
	up, ip := IDMapPaths(dst)
	if err := ratings.WriteIDMap(ctx, up, res.Users); err != nil {
		return BinResult{}, fmt.Errorf("bin: users map: %w", err)
	}
	if err := ratings.WriteIDMap(ctx, ip, res.Items); err != nil {
		return BinResult{}, fmt.Errorf("bin: items map: %w", err)
	}
	return res, nil
}

func setBit(b []uint64, i int) { b[i>>6] |= 1 << (uint(i) & 63) }

func countBits(b []uint64, lo, hi int) int {
	n := 0
	for i := lo; i < hi; i++ {
		if b[i>>6]&(1<<(uint(i)&63)) != 0 {
			n++
		}
	}
	return n
}

// indexer maps original ids (ascending in ids) to dense indices.
type indexer struct {
	table, neg []int32 // id (or -id for a negative id) -> index+1 (0: absent), |id| < ratings.IDSetDense
	other      map[int32]int32
}

func newIndexer(ids []int32) *indexer {
	x := &indexer{other: map[int32]int32{}}
	var top, bottom int32 = -1, 0
	for _, id := range ids {
		if id >= 0 && id < ratings.IDSetDense {
			top = max(top, id)
		} else if id < 0 && id > -ratings.IDSetDense {
			bottom = min(bottom, id)
		}
	}
	x.table = make([]int32, top+1)
	x.neg = make([]int32, -bottom+1)
	for i, id := range ids {
		switch {
		case id >= 0 && id < ratings.IDSetDense:
			x.table[id] = int32(i) + 1
		case id < 0 && id > -ratings.IDSetDense:
			x.neg[-id] = int32(i) + 1
		default:
			x.other[id] = int32(i)
		}
	}
	return x
}

func (x *indexer) index(id int32) int32 {
	if id >= 0 && int(id) < len(x.table) && x.table[id] > 0 {
		return x.table[id] - 1
	}
	if id < 0 && int(-int64(id)) < len(x.neg) && x.neg[-id] > 0 {
		return x.neg[-id] - 1
	}
	i, ok := x.other[id]
	if !ok {
		panic(fmt.Sprintf("movielens: id %d not indexed", id))
	}
	return i
}
