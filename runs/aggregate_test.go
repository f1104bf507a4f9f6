package runs

import (
	"math"
	"strings"
	"testing"
)

func TestAggregates(t *testing.T) {
	row := func(variant, lr string, seed int, status string, m map[string]float64) TrialRow {
		return TrialRow{Trial: Trial{Status: status, Params: map[string]string{
			"variant": `"` + variant + `"`, "lr": lr, "seed": string(rune('0' + seed)), "gauge": `"` + variant + `"`, "name": `"x"`}}, Summary: m}
	}
	trials := []TrialRow{
		row("gd", "0.5", 1, StatusDone, map[string]float64{"steps": Never, "ll": -2}),
		row("gd", "0.5", 2, StatusDone, map[string]float64{"steps": 300, "ll": -1}),
		row("gd", "1", 1, StatusDone, map[string]float64{"steps": 100, "ll": -3}),
		row("gd", "1", 2, StatusCached, map[string]float64{"steps": 200, "ll": -5}),
		row("gd", "1", 3, StatusFailed, map[string]float64{"steps": 1, "ll": 100}), // not counted
		row("gs", "1", 1, StatusDone, map[string]float64{"steps": 10, "ll": math.NaN()}),
		row("gs", "1", 2, StatusDiverged, map[string]float64{"steps": Never, "ll": math.NaN()}), // counted: a never
	}
	if got := SweptSettings(trials); len(got) != 1 || got[0] != "lr" {
		t.Fatalf("swept settings %v, want [lr] (not seed, name, variant, nor gauge, which is the variant's)", got)
	}
	aggs := Aggregates(trials, []Headline{{Metric: "steps", Lower: true}, {Metric: "ll"}, {Metric: "absent"}})
	if len(aggs) != 2 {
		t.Fatalf("%d aggregates, want 2 (absent has no values)", len(aggs))
	}
	st := aggs[0]
	if len(st.Cells) != 3 {
		t.Fatalf("%d cells, want 3: %+v", len(st.Cells), st.Cells)
	}
	c := st.Cells[0]
	if c.Variant != "gd" || c.Settings[0] != "0.5" || c.N != 2 || c.Never != 1 || c.Mean != 300 || !math.IsNaN(c.SD) || !IsNever(c.Median) {
		t.Errorf("gd lr=0.5: %+v", c)
	}
	c = st.Cells[1]
	half := 12.706204736174698 * math.Sqrt(5000) / math.Sqrt(2) // t(0.975, 1) sd / sqrt(n)
	if c.N != 2 || c.Never != 0 || c.Mean != 150 || math.Abs(c.SD-math.Sqrt(5000)) > 1e-9 || math.Abs(c.Hi-150-half) > 1e-6 || c.Median != 150 {
		t.Errorf("gd lr=1: %+v (want sd %v, CI half-width %v)", c, math.Sqrt(5000), half)
	}
	// The diverged seed of gs is a never: best steps, the fewest nevers,
	// then the lowest mean: gd lr=1 (150, no never) over gs (10, 1 never).
	if c := st.Cells[2]; c.N != 2 || c.Never != 1 || c.Mean != 10 || c.Best || st.Cells[0].Best || !st.Cells[1].Best {
		t.Errorf("best steps: %+v", st.Cells)
	}
	ll := aggs[1]
	if c := ll.Cells[2]; c.Missing != 2 || c.Finite() != 0 || c.Best {
		t.Errorf("gs ll (NaN): %+v", c)
	}
	// Mean -1.5 against -4 over two seeds each: the 95% interval of the
	// difference holds 0, a tie, so no best (gs has no value).
	if ll.Cells[0].Best || ll.Cells[1].Best {
		t.Errorf("best ll: %+v", ll.Cells)
	}
	if m := CensoredMedian([]float64{1, Never, Never, 2}); !IsNever(m) {
		t.Errorf("censored median of 1, 2, never, never = %v, want never", m)
	}
	if m := CensoredMedian([]float64{3, Never, 1}); m != 3 {
		t.Errorf("censored median of 1, 3, never = %v, want 3", m)
	}
}

func TestTQuantile(t *testing.T) {
	// gonum's distuv.StudentsT{Nu: df}.Quantile(0.975)
	for df, want := range map[int]float64{1: 12.706204736174692, 30: 2.042272456301239, 31: 2.0395134463964077, 40: 2.0210753903062724,
		60: 2.000297822014258, 100: 1.983971518523563, 1000: 1.9623390808262848} {
		if got := tQuantile975(df); math.Abs(got-want) > 1e-6 {
			t.Errorf("t(0.975, %d) = %.10g, want %.10g", df, got, want)
		}
	}
}

func TestNeverSpellings(t *testing.T) {
	for _, c := range []struct {
		v                 float64
		text, csv, asJSON string
	}{
		{Never, "never", "inf", `"+Inf"`},
		{math.Inf(-1), "-Inf", "-inf", `"-Inf"`},
		{math.NaN(), "NaN", "", "null"},
		{0.25, "0.25", "0.25", "0.25"},
	} {
		b, _ := JSONValue(c.v).MarshalJSON()
		if ValueText(c.v, 6) != c.text || CSVValue(c.v) != c.csv || string(b) != c.asJSON {
			t.Errorf("%v: %q %q %s, want %q %q %s", c.v, ValueText(c.v, 6), CSVValue(c.v), b, c.text, c.csv, c.asJSON)
		}
		var back JSONValue
		if err := back.UnmarshalJSON(b); err != nil || math.Float64bits(float64(back)) != math.Float64bits(c.v) && !math.IsNaN(c.v) {
			t.Errorf("%s reads back as %v (%v)", b, back, err)
		}
	}
}

// TestAggregateRange: the t-interval of a mean is cut to the metric's
// range (two seeds of steps: mean 500, sd 565.7, interval ±5083 uncut);
// the zero Range leaves it whole.
func TestAggregateRange(t *testing.T) {
	rows := []TrialRow{
		{Trial: Trial{Status: StatusDone, Params: map[string]string{"variant": `"gd"`, "seed": "1"}}, Summary: map[string]float64{"steps": 100, "auc": 0.9}},
		{Trial: Trial{Status: StatusDone, Params: map[string]string{"variant": `"gd"`, "seed": "2"}}, Summary: map[string]float64{"steps": 900, "auc": 0.99}},
	}
	aggs := Aggregates(rows, []Headline{{Metric: "steps", Lower: true, Range: NonNegative}, {Metric: "auc", Range: UnitInterval}, {Metric: "steps", Lower: true}})
	if c := aggs[0].Cells[0]; c.Lo != 0 || math.Abs(c.Hi-(500+12.7062047*565.685425/math.Sqrt2)) > 1e-3 {
		t.Errorf("non-negative steps: interval [%g, %g], want [0, about 5583]", c.Lo, c.Hi)
	}
	if c := aggs[1].Cells[0]; c.Hi != 1 || c.Lo >= 0.945 || c.Lo < 0.3 {
		t.Errorf("auc: interval [%g, %g], want [about 0.373, 1]", c.Lo, c.Hi)
	}
	if c := aggs[2].Cells[0]; c.Lo > -4000 {
		t.Errorf("steps without a range: interval [%g, %g], want it whole (below zero)", c.Lo, c.Hi)
	}
}

// TestNoBestForATie: the best cell is starred only when it can be told from
// the next best: not for means equal within 1e-9 of their size (a 1e-12
// difference starred a row before), nor when the 95% interval of the
// difference over the seeds holds 0.
func TestNoBestForATie(t *testing.T) {
	cell := func(v ...float64) Cell {
		c := Cell{N: len(v), Values: v, Mean: math.NaN(), SD: math.NaN()}
		var sum float64
		for _, x := range v {
			sum += x
		}
		c.Mean = sum / float64(len(v))
		if len(v) > 1 {
			var ss float64
			for _, x := range v {
				d := x - c.Mean
				ss += float64(d * d)
			}
			c.SD = math.Sqrt(ss / float64(len(v)-1))
		}
		return c
	}
	for _, tt := range []struct {
		name  string
		cells []Cell
		star  int // -1: none
	}{
		{"1e-12 apart, one value each", []Cell{cell(1), cell(1 + 1e-12)}, -1},
		{"apart, one value each", []Cell{cell(1), cell(1.5)}, 0},
		{"overlapping seeds", []Cell{cell(1, 2, 3), cell(1.1, 2.1, 3.1)}, -1},
		{"separate seeds", []Cell{cell(1, 1.01, 0.99), cell(5, 5.01, 4.99), cell(9, 9.1, 8.9)}, 0},
		{"a tie behind the best does not matter", []Cell{cell(0, 0.01, -0.01), cell(5, 5.01, 4.99), cell(5, 5.01, 4.99)}, 0},
	} {
		a := Aggregate{Headline: Headline{Lower: true}, Cells: tt.cells}
		a.markBest()
		got := -1
		for i, c := range a.Cells {
			if c.Best {
				got = i
			}
		}
		if got != tt.star {
			t.Errorf("%s: star on %d, want %d", tt.name, got, tt.star)
		}
	}
}

// TestPartialRunKeepsItsSettings: a run in progress whose finished trials
// all have dim = 5 still shows dim as a swept setting (its cells said
// nothing of dim before).
func TestPartialRunKeepsItsSettings(t *testing.T) {
	row := func(status, dim string, v float64) TrialRow {
		return TrialRow{Trial: Trial{Status: status, Params: map[string]string{"variant": `"gd"`, "dim": dim, "seed": "1"}},
			Summary: map[string]float64{"test_ll": v}}
	}
	trials := []TrialRow{row(StatusDone, "5", -1), row(StatusRunning, "10", 0), row(StatusPending, "20", 0)}
	aggs := Aggregates(trials, []Headline{{Metric: "test_ll"}})
	if len(aggs) != 1 || strings.Join(aggs[0].Settings, ",") != "dim" || len(aggs[0].Cells) != 1 || strings.Join(aggs[0].Cells[0].Settings, ",") != "5" {
		t.Fatalf("aggregates of a partial run: %+v", aggs)
	}
}
