package movielens

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/internal/testdata"
)

func TestRealLatestSmall(t *testing.T) {
	src := testdata.Path(t, "ml-latest-small/ratings.csv")
	ctx := context.Background()
	dir := t.TempDir()
	raw := filepath.Join(dir, "ratings.parquet")
	st, err := ratings.Ingest(ctx, src, raw, ratings.IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := ratings.Stats{Format: ratings.FormatCSV, Layout: "ratings.csv", Compression: "none", Ratings: 100836, Users: 610, Items: 9724, MinTime: 828124615, MaxTime: 1537799250, Bytes: st.Bytes}
	if st != want {
		t.Fatalf("ingest stats %+v, want %+v", st, want)
	}
	// 100836 ratings: the 50418th and 50419th smallest are both 3.5 (counts from the file:
	// 39120 below 3.5, 13136 at 3.5, 48580 above).
	bin := filepath.Join(dir, "binary.parquet")
	bst, err := Binarize(ctx, raw, bin)
	if err != nil {
		t.Fatal(err)
	}
	if wantB := (BinarizeStats{Median: 3.5, Ratings: 100836, Positive: 48580, Negative: 39120, Dropped: 13136}); bst != wantB {
		t.Fatalf("binarize %+v, want %+v", bst, wantB)
	}
	binned := filepath.Join(dir, "binned.parquet")
	res, err := Bin(ctx, bin, binned, 10)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, b := range res.Bins {
		sum += b.Ratings
	}
	if sum != 87700 || res.Ratings != 87700 || len(res.Users) != 610 || len(res.Items) > 9724 {
		t.Fatalf("bin: %d ratings in bins, %d users, %d items", sum, len(res.Users), len(res.Items))
	}
}

// smallBinary writes a Binary table of n ratings at timestamps 1000..1000+n-1 (those at
// k%5 in {1, 3} are the median and dropped) and returns its path.
func smallBinary(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(ratings.CSVHeader + "\n")
	for k := range n {
		// users 10,20,..,50; items 1000-k%7; ratings cycle so that the median is 3.0.
		fmt.Fprintf(&b, "%d,%d,%s,%d\n", 10*(1+k%5), 1000-k%7, []string{"1.0", "3.0", "4.5", "3.0", "5.0"}[k%5], 1000+k)
	}
	src := writeFile(t, filepath.Join(dir, "r.csv"), []byte(b.String()))
	ctx := context.Background()
	raw := filepath.Join(dir, "r.parquet")
	if _, err := ratings.Ingest(ctx, src, raw, ratings.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "b.parquet")
	st, err := Binarize(ctx, raw, out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Median != 3 {
		t.Fatalf("binarize %+v, want median 3", st)
	}
	return out
}

func TestMedian(t *testing.T) {
	tests := []struct {
		hist map[float32]int64
		want float64
	}{
		{map[float32]int64{1: 1}, 1},
		{map[float32]int64{1: 1, 2: 1}, 1.5},
		{map[float32]int64{1: 2, 2: 1}, 1},
		{map[float32]int64{0.5: 3, 3.5: 2, 5: 3}, 3.5},
		{map[float32]int64{0.5: 3, 3.5: 1, 5: 4, 4: 0}, 4.25},
	}
	for _, tc := range tests {
		if got, err := Median(tc.hist); err != nil || got != tc.want {
			t.Errorf("Median(%v) = %v, %v; want %v", tc.hist, got, err, tc.want)
		}
	}
	if _, err := Median(map[float32]int64{}); err == nil {
		t.Error("empty: no error")
	}
}

func TestBinarizeEvenSplitMedian(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir, "r.csv"), []byte(ratings.CSVHeader+"\n1,1,2.0,5\n1,2,4.0,6\n2,1,2.0,7\n2,2,4.0,8\n"))
	ctx := context.Background()
	raw := filepath.Join(dir, "r.parquet")
	if _, err := ratings.Ingest(ctx, src, raw, ratings.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := Binarize(ctx, raw, filepath.Join(dir, "b.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (BinarizeStats{Median: 3, Ratings: 4, Positive: 2, Negative: 2}); st != want {
		t.Fatalf("%+v, want %+v", st, want)
	}
	rows, err := ratings.ReadAll[ratings.Binary](ctx, filepath.Join(dir, "b.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []ratings.Binary{{User: 1, Item: 1, X: -1, Rating: 2, Timestamp: 5, TimeMS: 5000}, {User: 1, Item: 2, X: 1, Rating: 4, Timestamp: 6, TimeMS: 6000}, {User: 2, Item: 1, X: -1, Rating: 2, Timestamp: 7, TimeMS: 7000}, {User: 2, Item: 2, X: 1, Rating: 4, Timestamp: 8, TimeMS: 8000}}; !slices.Equal(rows, want) {
		t.Fatalf("%v, want %v", rows, want)
	}
}

func TestBinOfEqualDurations(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int64
		T      int
	}{{0, 99, 10}, {5, 105, 10}, {0, 1000, 7}, {828124615, 1537799250, 100}, {3, 3, 4}, {0, 5, 5}} {
		counts := make([]int64, tc.T)
		prev := tc.lo - 1
		for b := range tc.T {
			first, last := BinRange(b, tc.lo, tc.hi, tc.T)
			if first <= last && first != prev+1 {
				t.Fatalf("%+v: bin %d starts at %d after %d", tc, b, first, prev)
			}
			if first <= last {
				prev = last
				counts[b] = last - first + 1
				for _, ts := range []int64{first, last, (first + last) / 2} {
					if got := BinOf(ts, tc.lo, tc.hi, tc.T); got != b {
						t.Fatalf("%+v: BinOf(%d) = %d, want %d", tc, ts, got, b)
					}
				}
			}
		}
		if prev != tc.hi {
			t.Fatalf("%+v: bins end at %d", tc, prev)
		}
		// Equal durations: integer widths differ by at most one second (the closed last bin
		// holds one extra integer when T divides the span).
		if tc.hi > tc.lo {
			lo, hi := slices.Min(counts[:tc.T-1+boolInt(tc.T == 1)]), slices.Max(counts[:tc.T-1+boolInt(tc.T == 1)])
			if hi-lo > 1 || counts[tc.T-1] > hi+1 {
				t.Fatalf("%+v: bin widths %v", tc, counts)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestBinAndSplit(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	src := smallBinary(t, dir, 1001)
	binned := filepath.Join(dir, "binned.parquet")
	res, err := Bin(ctx, src, binned, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Users, []int32{10, 30, 50}) || !slices.Equal(res.Items, []int32{994, 995, 996, 997, 998, 999, 1000}) {
		t.Fatalf("id maps %v %v", res.Users, res.Items)
	}
	up, ip := IDMapPaths(binned)
	if u, err := ratings.ReadIDMap(ctx, up); err != nil || !slices.Equal(u, res.Users) {
		t.Fatalf("users map %v, %v", u, err)
	}
	if i, err := ratings.ReadIDMap(ctx, ip); err != nil || !slices.Equal(i, res.Items) {
		t.Fatalf("items map %v, %v", i, err)
	}
	cols, err := ratings.LoadColumns(ctx, binned)
	if err != nil {
		t.Fatal(err)
	}
	// Timestamps 1000..2000 minus the dropped (rating 3.0 at k%5 in {1,3}); span known.
	if res.MinTime != 1000 || res.MaxTime != 2000 {
		t.Fatalf("span %d..%d", res.MinTime, res.MaxTime)
	}
	for k := range cols.Len() {
		ts := cols.Timestamp[k]
		b := int((ts - 1000) * 4 / 1000)
		if ts == 2000 {
			b = 3
		}
		if int(cols.Bin[k]) != b {
			t.Fatalf("row %d: ts %d in bin %d, want %d", k, ts, cols.Bin[k], b)
		}
		orig := 1000 - (ts-1000)%7
		if res.Items[cols.Item[k]] != int32(orig) {
			t.Fatalf("row %d: item %d maps to %d, want %d", k, cols.Item[k], res.Items[cols.Item[k]], orig)
		}
	}
	var total int64
	for _, b := range res.Bins {
		total += b.Ratings
		if b.Users != 3 || b.Items != 7 {
			t.Fatalf("bin %+v", b)
		}
	}
	if total != int64(cols.Len()) || res.Ratings != total {
		t.Fatalf("bins hold %d, table %d", total, cols.Len())
	}

	// Split: exact sizes, a partition of the rows, deterministic.
	n := int64(cols.Len())
	split := func(sub string, seed uint64) ([3][]byte, SplitStats) {
		d := filepath.Join(dir, sub)
		paths := [3]string{d + "-train.parquet", d + "-valid.parquet", d + "-test.parquet"}
		st, err := Split(ctx, binned, paths[0], paths[1], paths[2], [3]float64{0.5, 0.2, 0.3}, seed)
		if err != nil {
			t.Fatal(err)
		}
		var files [3][]byte
		var all []ratings.Binned
		for k, p := range paths {
			files[k] = readBytes(t, p)
			rows, err := ratings.ReadAll[ratings.Binned](ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, rows...)
		}
		if int64(len(all)) != n {
			t.Fatalf("split holds %d rows, want %d", len(all), n)
		}
		return files, st
	}
	a, st := split("a", 7)
	if want := (SplitStats{Train: n / 2, Valid: n*7/10 - n/2, Test: n - n*7/10}); st != want {
		t.Fatalf("split %+v, want %+v (n=%d)", st, want, n)
	}
	b, _ := split("b", 7)
	c, _ := split("c", 8)
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			t.Fatalf("part %d differs between runs with the same seed", k)
		}
	}
	if bytes.Equal(a[0], c[0]) {
		t.Fatal("seeds 7 and 8 give the same train part")
	}
	if _, err := Split(ctx, binned, "x", "y", "z", [3]float64{0.5, 0.5, 0.5}, 1); err == nil {
		t.Fatal("fractions summing to 1.5 accepted")
	}
}

func TestSplitCounts(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		f    [3]float64
		want SplitStats
	}{
		{10, [3]float64{0.5, 0.2, 0.3}, SplitStats{5, 2, 3}},
		{17800000, [3]float64{0.5, 0.2, 0.3}, SplitStats{8900000, 3560000, 5340000}},
		{3, [3]float64{1, 0, 0}, SplitStats{3, 0, 0}},
		{0, [3]float64{0.5, 0.2, 0.3}, SplitStats{}},
	} {
		if got, err := SplitCounts(tc.n, tc.f); err != nil || got != tc.want {
			t.Errorf("SplitCounts(%d, %v) = %+v, %v; want %+v", tc.n, tc.f, got, err, tc.want)
		}
	}
}

func TestIngestDeterministic(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var text bytes.Buffer
	cfg := smallPlanted()
	if _, err := Generate(ctx, &text, nil, cfg); err != nil {
		t.Fatal(err)
	}
	src := writeFile(t, filepath.Join(dir, "ratings.csv"), text.Bytes())
	var first []byte
	for _, o := range []ratings.IngestOptions{{Workers: 1}, {Workers: 4, BlockBytes: 777, RowGroupSize: 5000}, {Workers: 3, BlockBytes: 4096}} {
		dst := filepath.Join(dir, "out.parquet")
		st, err := ratings.Ingest(ctx, src, dst, o)
		if err != nil {
			t.Fatal(err)
		}
		if st.Ratings != cfg.Ratings {
			t.Fatalf("%+v: %d ratings, want %d", o, st.Ratings, cfg.Ratings)
		}
		rows, err := ratings.ReadAll[ratings.Rating](ctx, dst)
		if err != nil {
			t.Fatal(err)
		}
		h := fmt.Sprint(rows)
		if first == nil {
			first = []byte(h)
		} else if h != string(first) {
			t.Fatalf("%+v: rows differ from Workers=1", o)
		}
	}
}

func TestReadWrongTable(t *testing.T) {
	dir := t.TempDir()
	src := smallBinary(t, dir, 20)
	if _, err := ratings.ReadAll[ratings.Binned](context.Background(), src); err == nil || !strings.Contains(err.Error(), `no column "user_id"`) {
		t.Fatalf("reading a Binary table as Binned: %v", err)
	}
}
