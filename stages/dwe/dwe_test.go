package dwe

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"goldstone/experiment"
)

func TestFilterYears(t *testing.T) {
	years := func() map[int]int64 { return map[int]int64{1899: 1, 1900: 2, 1905: 3, 1911: 4, 1912: 5} }
	for _, tc := range []struct {
		from, to int
		want     []int
	}{
		{0, 0, []int{1899, 1900, 1905, 1911, 1912}},
		{1900, 0, []int{1900, 1905, 1911, 1912}},
		{0, 1911, []int{1899, 1900, 1905, 1911}},
		{1900, 1911, []int{1900, 1905, 1911}},
		{1906, 1910, nil},
	} {
		y := years()
		FilterYears(y, tc.from, tc.to)
		if got := slices.Sorted(maps.Keys(y)); !slices.Equal(got, tc.want) {
			t.Errorf("FilterYears(from %d, to %d) kept %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestIngestFormats(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "segments.parquet")
	st, err := Ingest(ctx, IngestSettings{Format: "csv"}, experiment.InputLimits{}, filepath.Join("testdata", "golden-corpus.csv"), out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Segments != 240 || st.Tokens == 0 {
		t.Errorf("csv: %d segments, %d tokens; want 240 segments", st.Segments, st.Tokens)
	}
	// The CSV is not a folder of dated files nor n-gram lines.
	for _, format := range []string{"text", "ngram-v2"} {
		if _, err := Ingest(ctx, IngestSettings{Format: format}, experiment.InputLimits{}, filepath.Join("testdata", "golden-corpus.csv"), filepath.Join(t.TempDir(), "s.parquet")); err == nil {
			t.Errorf("format %s accepted a CSV file", format)
		}
	}
	if _, err := Ingest(ctx, IngestSettings{Format: "xml"}, experiment.InputLimits{}, "x", out); err == nil || !strings.Contains(err.Error(), `unknown corpus_format "xml"`) {
		t.Errorf("unknown format: error %v", err)
	}
	if _, err := Ingest(ctx, IngestSettings{Format: "jsnl"}, experiment.InputLimits{}, "x", out); err == nil || !strings.Contains(err.Error(), `(did you mean "jsonl"?)`) {
		t.Errorf("misspelt format: error %v", err)
	}
}

func TestYearsLabel(t *testing.T) {
	if got := YearsLabel(2020, 2021); got != "2020-2021" {
		t.Errorf("YearsLabel(2020, 2021) = %q", got)
	}
	if got := YearsLabel(1790, 1790); got != "1790" {
		t.Errorf("YearsLabel(1790, 1790) = %q", got)
	}
}
