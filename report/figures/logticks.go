package figures

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// logTicks is a plot.Ticker for log axes. Unlike plot.LogTicks it thins the
// labelled decades on wide ranges (at most about six labels) and labels 1-2-5
// multiples on ranges narrower than a decade, so every axis carries at least
// two labels.
type logTicks struct{}

var _ plot.Ticker = logTicks{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	a := int(math.Floor(math.Log10(lo)))
	b := int(math.Ceil(math.Log10(hi)))
	decades := b - a
	in := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }

	var ticks []plot.Tick
	labels := 0
	step := (decades + 5) / 6 // label every step-th decade
	if step < 1 {
		step = 1
	}
	for k := a; k <= b; k++ {
		p := math.Pow(10, float64(k))
		if in(p) {
			t := plot.Tick{Value: p}
			if floorMod(k, step) == 0 {
				t.Label = formatLog(p, k)
				labels++
			}
			ticks = append(ticks, t)
		}
		if decades > 8 || k == b {
			continue
		}
		for m := 2; m <= 9; m++ {
			if v := float64(m) * p; in(v) {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	if labels >= 2 {
		return unifyLabels(ticks)
	}
	// Narrow range: label minor ticks, 1-2-5 first, then every multiple.
	for _, mult := range [][]int{{2, 5}, {2, 3, 4, 5, 6, 7, 8, 9}} {
		n := labels
		for i := range ticks {
			if ticks[i].Label != "" {
				continue
			}
			k := int(math.Floor(math.Log10(ticks[i].Value) + 1e-9))
			m := int(math.Round(ticks[i].Value / math.Pow(10, float64(k))))
			for _, want := range mult {
				if m == want {
					n++
				}
			}
		}
		if n < 2 && len(mult) == 2 {
			continue
		}
		for i := range ticks {
			if ticks[i].Label != "" {
				continue
			}
			k := int(math.Floor(math.Log10(ticks[i].Value) + 1e-9))
			m := int(math.Round(ticks[i].Value / math.Pow(10, float64(k))))
			for _, want := range mult {
				if m == want {
					ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 3, 64)
				}
			}
		}
		break
	}
	n := 0
	for _, t := range ticks {
		if t.Label != "" {
			n++
		}
	}
	if n < 2 {
		// Narrower than the gap between consecutive multiples: linear ticks.
		return linTicks{}.Ticks(lo, hi)
	}
	return unifyLabels(ticks)
}

func floorMod(a, b int) int { return ((a % b) + b) % b }

// formatLog formats the decade 10^k: plainly near 1, as 1e<k> otherwise.
func formatLog(v float64, k int) string {
	if k >= -3 && k <= 4 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "1e" + strconv.Itoa(k)
}

// linTicks is a plot.Ticker for linear axes: about five labelled ticks at
// 1-2-2.5-5 multiples with as few decimals as the step needs (plot's default
// prints e.g. "2500.00"). With integer set, steps are whole numbers (counts).
type linTicks struct{ integer bool }

var _ plot.Ticker = linTicks{}

func (lt linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	raw := (hi - lo) / 5
	e := math.Floor(math.Log10(raw))
	p := math.Pow(10, e)
	step, minor, dec := 10*p, 2*p, -int(e)-1
	for _, m := range []struct {
		mant, minor float64
		extra       int
	}{{1, 0.2, 0}, {2, 0.5, 0}, {2.5, 0.5, 1}, {5, 1, 0}} {
		if m.mant*p >= raw*0.999 {
			step, minor, dec = m.mant*p, m.minor*p, -int(e)+m.extra
			break
		}
	}
	if lt.integer && step < 1 {
		step, minor, dec = 1, 1, 0
	}
	dec = max(dec, 0)
	useExp := math.Max(math.Abs(lo), math.Abs(hi)) >= 1e6 || step < 1e-4
	// labels: one format for the whole axis (all plain or all 2.5e6 style)
	var ticks []plot.Tick
	for k := math.Ceil(lo / minor); k*minor <= hi*(1+1e-12)+1e-300; k++ {
		v := k * minor
		if math.Abs(v) < minor*1e-9 {
			v = 0
		}
		t := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			if useExp {
				t.Label = formatExp(v)
			} else {
				t.Label = strconv.FormatFloat(v, 'f', dec, 64)
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// formatExp formats v as mantissa "e" exponent without padding or plus
// sign (2.5e-4, 1e5, 0), the style of the log axes' decade labels.
func formatExp(v float64) string {
	if v == 0 {
		return "0"
	}
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	if len(mant) > 5 { // at most 4 significant digits
		s = strconv.FormatFloat(v, 'e', 3, 64)
		mant, exp, _ = strings.Cut(s, "e")
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
	}
	n, _ := strconv.Atoi(exp)
	return mant + "e" + strconv.Itoa(n)
}

// unifyLabels relabels the labelled ticks of a log axis in one format:
// plain numbers when every label is between 0.001 and 10000, else every
// label in formatExp style (never "5e+05" next to "1e5", or "1000" next to
// "1e5").
func unifyLabels(ticks []plot.Tick) []plot.Tick {
	exp := false
	for _, t := range ticks {
		if t.Label == "" {
			continue
		}
		if a := math.Abs(t.Value); a != 0 && (a < 1e-3*(1-1e-9) || a > 1e4*(1+1e-9)) {
			exp = true
		}
	}
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		if exp {
			ticks[i].Label = formatExp(t.Value)
		} else {
			ticks[i].Label = strconv.FormatFloat(roundSig(t.Value, 6), 'f', -1, 64)
		}
	}
	return ticks
}

// roundSig rounds v to n significant digits (removes 0.30000000000000004).
func roundSig(v float64, n int) float64 {
	if v == 0 || !finite(v) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	return f
}
