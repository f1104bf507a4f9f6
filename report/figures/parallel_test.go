package figures

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParallel: one group per line, in order worst first (the best on
// top); a missing value breaks the line; a line without a colour is grey
// and dashed; bad specs are refused; the output is the same bytes twice.
func TestParallel(t *testing.T) {
	spec := ParallelSpec{Title: "t <x>", ColorLabel: "obj", Axes: []ParallelAxis{
		{Name: "shape", Categories: []string{"a", "b"}},
		{Name: "lr", Lo: 0.01, Hi: 1, Log: true},
		{Name: "obj", Lo: 0, Hi: 2},
	}, Lines: []ParallelLine{
		{Name: "best", Values: []float64{0, 0.1, 0}, Shade: 0, Tip: "best"},
		{Name: "gap", Values: []float64{1, math.NaN(), 1}, Shade: 0.5},
		{Name: "failed", Values: []float64{1, 0.5, math.NaN()}, Shade: math.NaN()},
	}}
	dir := t.TempDir()
	p := filepath.Join(dir, "p.svg")
	if err := Parallel(p, spec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if n := strings.Count(s, `class="trial"`); n != 3 {
		t.Fatalf("%d lines, want 3", n)
	}
	iFailed, iGap, iBest := strings.Index(s, `data-trial="failed"`), strings.Index(s, `data-trial="gap"`), strings.Index(s, `data-trial="best"`)
	if !(iFailed < iGap && iGap < iBest) {
		t.Fatalf("lines not drawn worst first: failed %d, gap %d, best %d", iFailed, iGap, iBest)
	}
	gap := s[iGap : strings.Index(s[iGap:], "</g>")+iGap]
	if strings.Count(gap, "M") != 2 || strings.Contains(gap, " L") || strings.Count(gap, "<circle") != 2 {
		t.Fatalf("a missing value does not break the line: %s", gap)
	}
	failed := s[iFailed : strings.Index(s[iFailed:], "</g>")+iFailed]
	if !strings.Contains(failed, "#999999") || !strings.Contains(failed, "stroke-dasharray") {
		t.Fatalf("a line without a colour: %s", failed)
	}
	if !strings.Contains(s, "t &lt;x&gt;") {
		t.Fatal("the title is not escaped")
	}
	q := filepath.Join(dir, "q.svg")
	if err := Parallel(q, spec); err != nil {
		t.Fatal(err)
	}
	if c, _ := os.ReadFile(q); !bytes.Equal(b, c) {
		t.Fatal("two drawings of one spec differ")
	}
	bad := spec
	bad.Lines = []ParallelLine{{Name: "short", Values: []float64{1}}}
	if err := Parallel(filepath.Join(dir, "bad.svg"), bad); err == nil || !strings.Contains(err.Error(), "1 values for 3 axes") {
		t.Fatalf("a line of the wrong length: %v", err)
	}
	bad = spec
	bad.Axes = []ParallelAxis{{Name: "x", Lo: 0, Hi: 1, Log: true}, {Name: "y", Lo: 1, Hi: 1}}
	if err := Parallel(filepath.Join(dir, "bad.svg"), bad); err == nil {
		t.Fatal("a log axis from 0 accepted")
	}
}
