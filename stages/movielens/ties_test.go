package movielens

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"goldstone/formats/ratings"

	"goldstone/experiment"
	"goldstone/pipeline"
	"goldstone/trialio"
)

// starsTable writes a ratings.csv with the given number of ratings of each star value
// (user k%7, item k%11, time k) and returns its path.
func starsTable(t *testing.T, dir string, counts map[int]int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(ratings.CSVHeader + "\n")
	k := 0
	for stars := 1; stars <= 5; stars++ {
		for range counts[stars] {
			fmt.Fprintf(&b, "%d,%d,%d,%d\n", k%7, k%11, stars, 1000000+k)
			k++
		}
	}
	return writeFile(t, filepath.Join(dir, "ratings.csv"), []byte(b.String()))
}

// Round 3, item 5: binarize_ties drops the ratings equal to the median (the paper's
// binarization, the default) or counts them as positive or negative; the counts say
// which, and binarize.json of the default is as it was.
func TestBinarizeTies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw := filepath.Join(dir, "r.parquet")
	if _, err := ratings.Ingest(ctx, starsTable(t, dir, map[int]int{1: 10, 2: 20, 3: 40, 4: 20, 5: 10}), raw, ratings.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ties Ties
		want BinarizeStats
		json string
		x3   int8 // the label of the 3-star ratings; 0: dropped
	}{
		{"", BinarizeStats{Median: 3, Ratings: 100, Positive: 30, Negative: 30, Dropped: 40}, `{"median":3,"ratings":100,"positive":30,"negative":30,"dropped":40}`, 0},
		{TiesDrop, BinarizeStats{Median: 3, Ratings: 100, Positive: 30, Negative: 30, Dropped: 40}, `{"median":3,"ratings":100,"positive":30,"negative":30,"dropped":40}`, 0},
		{TiesPositive, BinarizeStats{Median: 3, Ratings: 100, Positive: 70, Negative: 30, Ties: TiesPositive, Tied: 40}, `{"median":3,"ratings":100,"positive":70,"negative":30,"dropped":0,"ties":"positive","tied":40}`, 1},
		{TiesNegative, BinarizeStats{Median: 3, Ratings: 100, Positive: 30, Negative: 70, Ties: TiesNegative, Tied: 40}, `{"median":3,"ratings":100,"positive":30,"negative":70,"dropped":0,"ties":"negative","tied":40}`, -1},
	} {
		dst := filepath.Join(t.TempDir(), "b.parquet")
		st, err := BinarizeWith(ctx, raw, dst, BinarizeOptions{Ties: tc.ties})
		if err != nil || st != tc.want {
			t.Fatalf("ties %q: %+v, %v; want %+v", tc.ties, st, err, tc.want)
		}
		if b, _ := json.Marshal(st); string(b) != tc.json {
			t.Errorf("ties %q: binarize.json %s, want %s", tc.ties, b, tc.json)
		}
		rows, err := ratings.ReadAll[ratings.Binary](ctx, dst)
		if err != nil || int64(len(rows)) != st.Kept() {
			t.Fatalf("ties %q: %d rows, %v; want %d", tc.ties, len(rows), err, st.Kept())
		}
		for _, r := range rows {
			want := tc.x3
			switch {
			case r.Rating > 3:
				want = 1
			case r.Rating < 3:
				want = -1
			}
			if r.X != want {
				t.Fatalf("ties %q: rating %v labelled %d, want %d", tc.ties, r.Rating, r.X, want)
			}
		}
		hist := map[float32]int64{1: 10, 2: 20, 3: 40, 4: 20, 5: 10}
		if got, err := CountBinarize(hist, tc.ties); err != nil || got != tc.want {
			t.Errorf("CountBinarize(ties %q) = %+v, %v; want %+v", tc.ties, got, err, tc.want)
		}
	}
}

// Ratings that leave one label empty are refused before binarize.parquet is written,
// naming the data set and the setting to change: 90% one-star and 10% five-star (the
// issue's file: median 1, 2,700 dropped, 300 positive, none negative) keeps both labels
// only with binarize_ties = "negative"; equal ratings with no binarize_ties at all.
func TestBinarizeRefusesOneLabel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		counts map[int]int
		ties   Ties
		want   []string // "" : binarizes
	}{
		{"90/10, drop", map[int]int{1: 2700, 5: 300}, TiesDrop, []string{"2700 of 3000 ratings equal the median 1 and are dropped", "leaving 300 positive and 0 negative", `set binarize_ties = "negative" (300 positive, 2700 negative)`, `likelihood = "gaussian"`}},
		{"90/10, positive", map[int]int{1: 2700, 5: 300}, TiesPositive, []string{"count as positive", "leaving 3000 positive and 0 negative", `binarize_ties = "negative"`}},
		{"90/10, negative", map[int]int{1: 2700, 5: 300}, TiesNegative, nil},
		{"10/90, drop", map[int]int{1: 300, 5: 2700}, TiesDrop, []string{`set binarize_ties = "positive" (2700 positive, 300 negative)`}},
		{"all equal", map[int]int{4: 50}, TiesPositive, []string{"all 50 ratings equal the median 4", `use likelihood = "gaussian"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			raw := filepath.Join(dir, "r.parquet")
			if _, err := ratings.Ingest(ctx, starsTable(t, dir, tc.counts), raw, ratings.IngestOptions{}); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "b.parquet")
			_, err := BinarizeWith(ctx, raw, dst, BinarizeOptions{Ties: tc.ties, Name: "dataset own.csv"})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("binarized")
			}
			for _, w := range append(tc.want, "binarize dataset own.csv: cannot binarize at the median") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\ndoes not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), raw) {
				t.Errorf("%v names the cache file", err)
			}
			if _, err := os.Stat(dst); !os.IsNotExist(err) {
				t.Errorf("%s written", dst)
			}
		})
	}
}

// The same check runs when the experiment is built (runner plan, a run before it is
// recorded) on the whole table, naming the data file and the setting; a binarization
// that drops more than binarize_warn_share of the ratings is a warning; a Gaussian
// likelihood reads the ratings as rated and is not checked.
func TestBinarizeCheckedAtBuild(t *testing.T) {
	build := func(t *testing.T, counts map[int]int, extra string, scan bool) (*experiment.Built, string, error) {
		t.Helper()
		dir := t.TempDir()
		path := starsTable(t, dir, counts)
		c, err := experiment.ParseConfig("t.toml", []byte(fmt.Sprintf("[experiments.own]\npipeline = \"movielens\"\n[experiments.own.settings]\ndataset = %q\n%s\n", path, extra)))
		if err != nil {
			t.Fatal(err)
		}
		e := c.Experiments["own"]
		b, err := experiment.Build(context.Background(), e, e.Trials(), experiment.Env{DataDir: dir, Scan: scan})
		return b, path, err
	}
	// 90/10 beyond the 64 KiB that CheckTable reads.
	big := map[int]int{1: 9000, 5: 1000}
	_, path, err := build(t, big, "", true)
	if err == nil || !strings.Contains(err.Error(), path+": cannot binarize at the median") || !strings.Contains(err.Error(), `binarize_ties = "negative"`) {
		t.Errorf("90/10: %v; want an error naming %s and binarize_ties", err, path)
	}
	if _, _, err := build(t, big, `binarize_ties = "negative"`, true); err != nil {
		t.Errorf("90/10 with ties negative: %v", err)
	}
	if _, _, err := build(t, big, `likelihood = "gaussian"`, true); err != nil {
		t.Errorf("90/10 with a Gaussian likelihood: %v", err)
	}
	if _, _, err := build(t, big, "", false); err != nil {
		t.Errorf("90/10 without Scan (report, words, a worker): %v", err)
	}
	// 40% ties: a warning, with binarize_warn_share = 0.25, none at 0.5.
	ties := map[int]int{1: 1500, 3: 4000, 5: 4500}
	b, _, err := build(t, ties, "", true)
	if err != nil || len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "binarizing drops 4000 of 10000 ratings (40.0%, more than binarize_warn_share = 0.25)") {
		t.Errorf("40%% ties: %v, warnings %q", err, b.Warnings)
	}
	if b, _, err := build(t, ties, "binarize_warn_share = 0.5", true); err != nil || len(b.Warnings) != 0 {
		t.Errorf("40%% ties, warn share 0.5: %v, warnings %q", err, b.Warnings)
	}
}

// The counts reach each trial's summary (evaluate reads binarize.json).
func TestBinarizeCountsInSummary(t *testing.T) {
	dir := t.TempDir()
	st := BinarizeStats{Median: 3, Ratings: 100, Positive: 30, Negative: 25, Dropped: 45}
	p := filepath.Join(dir, "binarize.json")
	if err := trialio.WriteJSON(p, st); err != nil {
		t.Fatal(err)
	}
	sum := trialio.Summary{}
	io := pipeline.NewIO(map[string]string{"binarize": p}, nil, 1, nil)
	if err := addInputSummaries(io, sum); err != nil {
		t.Fatal(err)
	}
	want := trialio.Summary{"binarize_kept": 55, "binarize_ties_dropped": 45, "binarize_positive": 30, "binarize_negative": 25}
	if fmt.Sprint(sum) != fmt.Sprint(want) {
		t.Errorf("summary %v, want %v", sum, want)
	}
}

// For any ratings, each binarize_ties counts every rating once (kept or dropped), the
// median splits them as Median says, and Binarizable refuses exactly the binarizations
// that leave a label empty.
func FuzzBinarizeCounts(f *testing.F) {
	f.Add([]byte{1, 1, 1, 9}, uint8(0))
	f.Add([]byte{4, 4}, uint8(1))
	f.Add([]byte{1, 2, 3, 3, 3, 4, 5}, uint8(2))
	f.Fuzz(func(t *testing.T, stars []byte, mode uint8) {
		if len(stars) == 0 {
			return
		}
		hist := map[float32]int64{}
		for _, s := range stars {
			hist[float32(s%11)/2]++
		}
		ties := []Ties{TiesDrop, TiesPositive, TiesNegative}[mode%3]
		st, err := CountBinarize(hist, ties)
		if err != nil {
			t.Fatal(err)
		}
		if st.Ratings != int64(len(stars)) || st.Kept()+st.Dropped != st.Ratings || (ties != TiesDrop && st.Dropped != 0) {
			t.Fatalf("%v ties %s: %+v", hist, ties, st)
		}
		var below, above int64
		for v, c := range hist {
			if float64(v) < st.Median {
				below += c
			} else if float64(v) > st.Median {
				above += c
			}
		}
		if 2*below > st.Ratings || 2*above > st.Ratings {
			t.Fatalf("%v: median %v has %d below and %d above", hist, st.Median, below, above)
		}
		if err := Binarizable(hist, ties); (err == nil) != (st.Positive > 0 && st.Negative > 0) {
			t.Fatalf("%v ties %s: %+v, Binarizable %v", hist, ties, st, err)
		}
	})
}

// RatingCounts, the check before a run, reads a table as Ingest does: where the ingest
// succeeds it counts the same ratings (before duplicates are dropped), and where it fails
// on a line, so does RatingCounts.
func FuzzRatingCounts(f *testing.F) {
	f.Add([]byte("userId,movieId,rating,timestamp\r\r\n1,2,3.5,4\n1,2,3.5,4\n2,2,1,5\n"))
	f.Add([]byte("1::2::3::4\n"))
	f.Add([]byte("1\t2\tx\t4\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		dir := t.TempDir()
		src := writeFile(t, filepath.Join(dir, "r"), text)
		ctx := context.Background()
		st, ierr := ratings.Ingest(ctx, src, filepath.Join(dir, "r.parquet"), ratings.IngestOptions{Workers: 1})
		hist, cerr := ratings.RatingCounts(ctx, src, nil, ratings.IngestOptions{Workers: 1})
		if ierr != nil {
			if cerr == nil && !strings.Contains(ierr.Error(), "no ratings") {
				t.Fatalf("Ingest: %v; RatingCounts read %v", ierr, hist)
			}
			return
		}
		if cerr != nil {
			t.Fatalf("Ingest read %d ratings; RatingCounts: %v", st.Ratings, cerr)
		}
		rows, err := ratings.ReadAll[ratings.Rating](ctx, filepath.Join(dir, "r.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, c := range hist {
			n += c
		}
		if n != int64(len(rows))+st.Duplicates {
			t.Fatalf("RatingCounts counted %d ratings, Ingest kept %d and dropped %d duplicates", n, len(rows), st.Duplicates)
		}
		if st.Duplicates == 0 {
			for _, r := range rows {
				hist[r.Rating]--
			}
			for v, c := range hist {
				if c != 0 {
					t.Fatalf("rating %v: RatingCounts and Ingest differ by %d", v, c)
				}
			}
		}
	})
}
