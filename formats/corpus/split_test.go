package corpus

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func TestSplitNeverEnds(t *testing.T) {
	for n := 3; n <= 40; n++ {
		for seed := range uint64(30) {
			k := (n - 2) * int(seed%4) / 4
			v := (n - 2 - k) / 3
			sp, err := SplitSteps(n, SplitOptions{Test: k, Valid: v, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			checkSplit(t, n, sp, k, v)
		}
	}
	sp, err := SplitSteps(209, SplitOptions{Test: 21, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, 209, sp, 21, 0)
	if len(sp.Train) != 188 {
		t.Errorf("%d training steps, want 188", len(sp.Train))
	}
	again, _ := SplitSteps(209, SplitOptions{Test: 21, Seed: 7})
	other, _ := SplitSteps(209, SplitOptions{Test: 21, Seed: 8})
	if !reflect.DeepEqual(sp, again) || reflect.DeepEqual(sp.Test, other.Test) {
		t.Errorf("seeding: same seed equal %v, other seed differs %v", reflect.DeepEqual(sp, again), !reflect.DeepEqual(sp.Test, other.Test))
	}
	for _, opt := range []SplitOptions{{Test: 9}, {Test: 4, Valid: 5}, {Test: -1}, {Every: 1, Valid: 1}} {
		if _, err := SplitSteps(10, opt); err == nil {
			t.Errorf("SplitSteps(10, %+v) accepted", opt)
		}
	}
}

func checkSplit(t *testing.T, n int, sp Split, k, v int) {
	t.Helper()
	if len(sp.Test) != k || len(sp.Valid) != v || len(sp.Train)+k+v != n {
		t.Fatalf("n=%d: sizes %d/%d/%d, want test %d valid %d", n, len(sp.Train), len(sp.Valid), len(sp.Test), k, v)
	}
	all := slices.Concat(sp.Train, sp.Valid, sp.Test)
	slices.Sort(all)
	for i, s := range all {
		if s != i {
			t.Fatalf("n=%d: not a partition: %v", n, sp)
		}
	}
	for _, s := range slices.Concat(sp.Valid, sp.Test) {
		if s == 0 || s == n-1 {
			t.Fatalf("n=%d: held-out step %d is an end", n, s)
		}
	}
	if sp.Role(0) != RoleTrain || sp.Role(n-1) != RoleTrain {
		t.Fatalf("n=%d: ends not training", n)
	}
}

func TestSplitEvery(t *testing.T) {
	sp, err := SplitSteps(21, SplitOptions{Every: 5, Valid: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(sp.Test, sp.Valid, sp.Role(5), sp.Role(2), sp.Role(1))
	if want := "[5 10 15] [2 7] test valid train"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	sp, _ = SplitSteps(11, SplitOptions{Every: 10})
	if len(sp.Test) != 0 { // step 10 is the last one
		t.Errorf("test %v, want none", sp.Test)
	}
}

func TestMakeBins(t *testing.T) {
	years := map[int]int64{1930: 10, 1931: 10, 1932: 20, 1934: 10, 1940: 30, 1941: 0}
	tests := []struct {
		opt  BinOptions
		want string // Lo Hi Tau Tokens
	}{
		{BinOptions{}, "[1930 1931 1932 1934 1940] [1930 1931 1932 1934 1940] [1930 1931 1932 1934 1940] [10 10 20 10 30]"},
		{BinOptions{Width: 5}, "[1930 1940] [1934 1944] [1932 1942] [50 30]"},
		{BinOptions{Width: 5, Tau: TauMean}, "[1930 1940] [1934 1944] [1931.8 1940] [50 30]"},
		{BinOptions{Count: 2}, "[1930 1936] [1935 1940] [1932.5 1938] [50 30]"},
		{BinOptions{Count: 11}, "[1930 1931 1932 1934 1940] [1930 1931 1932 1934 1940] [1930 1931 1932 1934 1940] [10 10 20 10 30]"},
		{BinOptions{Count: 3}, "[1930 1934 1938] [1933 1937 1940] [1931.5 1935.5 1939] [40 10 30]"},
	}
	for _, tc := range tests {
		b, err := MakeBins(years, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(b.Lo, b.Hi, b.Tau, b.Tokens); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.opt, got, tc.want)
		}
		for y := 1925; y < 1950; y++ {
			bin, ok := b.Of(y)
			inData := years[y] > 0
			if inData && (!ok || y < b.Lo[bin] || y > b.Hi[bin]) {
				t.Errorf("%+v: Of(%d) = %d, %v", tc.opt, y, bin, ok)
			}
			if ok && (y < b.Lo[bin] || y > b.Hi[bin]) {
				t.Errorf("%+v: Of(%d) = %d outside its range", tc.opt, y, bin)
			}
		}
	}
	for _, opt := range []BinOptions{{Width: 2, Count: 2}, {Width: -1}} {
		if _, err := MakeBins(years, opt); err == nil {
			t.Errorf("MakeBins(%+v) accepted", opt)
		}
	}
	if _, err := MakeBins(map[int]int64{1: 0}, BinOptions{}); err == nil {
		t.Error("MakeBins without data accepted")
	}
}
