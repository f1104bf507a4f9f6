package corpus

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestBinDataYears: a bin records the first and last year that has data, not
// only its nominal range (the SOTU corpus ends in 2021, inside 2020..2029),
// and the step file keeps them.
func TestBinDataYears(t *testing.T) {
	years := map[int]int64{1790: 5, 1793: 2, 1801: 1, 2020: 4, 2021: 3}
	b, err := MakeBins(years, BinOptions{Width: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(b.Lo, b.Hi, b.First, b.Last), "[1790 1800 2020] [1799 1809 2029] [1790 1801 2020] [1793 1801 2021]"; got != want {
		t.Fatalf("bins %s, want %s", got, want)
	}
	path := filepath.Join(t.TempDir(), "steps.parquet")
	if err := WriteSteps(path, b, Split{Train: []int{0, 2}, Test: []int{1}}); err != nil {
		t.Fatal(err)
	}
	r, _, err := ReadSteps(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(r.First, r.Last), fmt.Sprint(b.First, b.Last); got != want {
		t.Fatalf("read back %s, want %s", got, want)
	}
}
