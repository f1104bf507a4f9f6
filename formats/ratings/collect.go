package ratings

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// IDName is one row of an ingested table's id dictionary (IDNamesPath): in the user or
// item column of the ratings table, Code stands for the id written ID in the source. Only
// ids that are not plain non-negative decimal int32 numbers are listed (those are their
// own code); codes are -1, -2, ... per column in order of first appearance.
type IDName struct {
	Column string `parquet:"column,dict"` // "user" or "item"
	Code   int32  `parquet:"code"`
	ID     string `parquet:"id"`
}

// Columns of IDName.
const (
	IDColumnUser = "user"
	IDColumnItem = "item"
)

// idDict assigns negative codes to text ids in order of first appearance.
type idDict struct {
	codes map[string]int32
	names []string
}

func newIDDict() *idDict { return &idDict{codes: map[string]int32{}} }

func (d *idDict) code(b []byte) (int32, error) {
	if c, ok := d.codes[string(b)]; ok {
		return c, nil
	}
	if len(d.names) == math.MaxInt32 {
		return 0, fmt.Errorf("more than %d distinct text ids", math.MaxInt32)
	}
	d.names = append(d.names, string(b))
	c := -int32(len(d.names))
	d.codes[d.names[len(d.names)-1]] = c
	return c, nil
}

// textID says that the user (or, with item, the item) of row row has the text id
// arena[off:end].
type textID struct {
	row      int32
	item     bool
	off, end int32
}

// Times outside [oddBefore, oddAfter) are counted in Stats (a unix time of 0 or below is
// often a missing value; one after 2100 often milliseconds read as seconds).
var (
	oddBefore = int64(0)                                           // 1970-01-01 UTC
	oddAfter  = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix() // 2100-01-01 UTC
)

// collector receives the parsed rows in input order, whatever the source: it gives text
// ids their codes, counts distinct ids, times and odd times, remembers a hash of every
// (user, item, time) for the duplicate check, and writes the rows (unless w is nil).
type collector struct {
	w            *TableWriter[Rating]
	dicts        [2]*idDict
	users, items *IDSet
	st           *Stats
	hashes       [256][]uint64 // by the hash's top byte
	maxRows      int64         // more rows are an error (max_input_rows); 0: no bound
	// hist, when not nil, makes the collector count the ratings by value and do
	// nothing else (RatingCounts): no ids, times, hashes or rows written.
	hist map[float32]int64
}

func newCollector(st *Stats) *collector {
	return &collector{dicts: [2]*idDict{newIDDict(), newIDDict()}, users: NewIDSet(), items: NewIDSet(), st: st}
}

// add codes the text ids of rows (texts, in row order, with their bytes in arena) and
// writes the rows.
func (c *collector) add(rows []Rating, texts []textID, arena []byte) error {
	if c.maxRows > 0 && c.st.Ratings+int64(len(rows)) > c.maxRows {
		return fmt.Errorf("more than %d ratings: raise max_input_rows if the table is real data", c.maxRows)
	}
	if c.hist != nil {
		for i := range rows {
			c.hist[rows[i].Rating]++
		}
		c.st.Ratings += int64(len(rows))
		return nil
	}
	for _, t := range texts {
		d := 0
		if t.item {
			d = 1
		}
		code, err := c.dicts[d].code(arena[t.off:t.end])
		if err != nil {
			return err
		}
		if t.item {
			rows[t.row].Item = code
		} else {
			rows[t.row].User = code
		}
	}
	st := c.st
	for i := range rows {
		r := &rows[i]
		c.users.Add(r.User)
		c.items.Add(r.Item)
		if st.Ratings == 0 && i == 0 {
			st.MinTime, st.MaxTime = r.Timestamp, r.Timestamp
		}
		st.MinTime = min(st.MinTime, r.Timestamp)
		st.MaxTime = max(st.MaxTime, r.Timestamp)
		c.countTime(r.Timestamp, 1)
		h := rowHash(r.User, r.Item, r.Timestamp)
		c.hashes[h>>56] = append(c.hashes[h>>56], h)
	}
	if len(rows) > 0 && c.w != nil {
		if _, err := c.w.Write(rows); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	st.Ratings += int64(len(rows))
	return nil
}

func (c *collector) countTime(ts int64, n int64) {
	switch {
	case ts < oddBefore:
		c.st.Before1970 += n
	case ts >= oddAfter:
		c.st.After2100 += n
	}
}

// finish sets the distinct counts.
func (c *collector) finish() {
	c.st.Users, c.st.Items = c.users.Len(), c.items.Len()
	c.st.TextUsers, c.st.TextItems = len(c.dicts[0].names), len(c.dicts[1].names)
}

// names returns the dictionary as IDName rows: users, then items, by code -1, -2, ...
func (c *collector) names() []IDName {
	var out []IDName
	for d, col := range []string{IDColumnUser, IDColumnItem} {
		for i, n := range c.dicts[d].names {
			out = append(out, IDName{Column: col, Code: -int32(i + 1), ID: n})
		}
	}
	return out
}

// rowHash mixes a (user, item, time) triple into 64 bits (splitmix64's finaliser).
func rowHash(user, item int32, ts int64) uint64 {
	mix := func(z uint64) uint64 {
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	return mix(mix(uint64(uint32(user))<<32|uint64(uint32(item))) ^ uint64(ts))
}

// repeatedHashes returns the hashes that occur more than once (candidates for duplicate
// rows; a hash collision is told apart later), sorting the buckets in parallel.
func (c *collector) repeatedHashes(ctx context.Context, workers int) (map[uint64]struct{}, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	found := make([][]uint64, len(c.hashes))
	for b := range c.hashes {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			h := c.hashes[b]
			slices.Sort(h)
			for i := 1; i < len(h); i++ {
				if h[i] == h[i-1] && (len(found[b]) == 0 || found[b][len(found[b])-1] != h[i]) {
					found[b] = append(found[b], h[i])
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := map[uint64]struct{}{}
	for b := range found {
		for _, h := range found[b] {
			out[h] = struct{}{}
		}
		c.hashes[b] = nil
	}
	return out, nil
}
