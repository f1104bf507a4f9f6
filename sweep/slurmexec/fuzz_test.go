package slurmexec

import (
	"math"
	"strings"
	"testing"
)

// The parsers of sbatch's resource settings: whatever they get, a value
// in range or an error, never a panic (.ci/fuzz.sh).

func FuzzParseMem(f *testing.F) {
	for _, s := range []string{"4096", "4G", "1.5t", "512K", " 2 g ", "", "-1", "1e300", "Inf",
		"NaN"} { // NaN was once accepted as -2^63 MiB
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mb, err := ParseMem(s)
		if err != nil {
			return
		}
		if mb < 0 || mb > math.MaxInt32 {
			t.Fatalf("ParseMem(%q) = %d MiB", s, mb)
		}
	})
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"30", "30:15", "1:02:03", "2-12", "2-12:30", "2-12:30:15", "", "1-", "::", "99999999999999999-0",
		"144115188075855872-0"} { // the last: 2^57 days, once accepted as 0 s (the product wrapped around)
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sec, err := ParseTime(s)
		if err != nil {
			return
		}
		if sec < 0 || sec > math.MaxInt32 {
			t.Fatalf("ParseTime(%q) = %d s", s, sec)
		}
		// The same sum in floating point (no overflow): an accepted time
		// is what the fields say, not a wrapped-around product.
		var days, h, m, x float64
		rest := s
		if d, r, ok := strings.Cut(s, "-"); ok {
			days, rest = num(d), r
		}
		f := strings.Split(rest, ":")
		switch {
		case strings.Contains(s, "-"):
			h = num(f[0])
			if len(f) > 1 {
				m = num(f[1])
			}
			if len(f) > 2 {
				x = num(f[2])
			}
		case len(f) == 1:
			m = num(f[0])
		case len(f) == 2:
			m, x = num(f[0]), num(f[1])
		default:
			h, m, x = num(f[0]), num(f[1]), num(f[2])
		}
		if want := ((days*24+h)*60+m)*60 + x; math.Abs(want-float64(sec)) > 1 {
			t.Fatalf("ParseTime(%q) = %d s, the fields say %g", s, sec, want)
		}
	})
}

func num(s string) float64 {
	var v float64
	for _, c := range s {
		v = v*10 + float64(c-'0')
	}
	return v
}
