package batch

import (
	"encoding/json"
	"math"
	"testing"
)

// FuzzNum: Num reads any JSON text without panicking, and every float64
// survives a JSON document bit for bit (NaN as a NaN, -0 as -0).
func FuzzNum(f *testing.F) {
	for _, s := range []string{"1", "-0", "null", `"+Inf"`, `"-Inf"`, `"NaN"`, "1e400", `"x"`, `"\u00`, "", "[1]"} {
		f.Add([]byte(s), math.Float64bits(0.1))
	}
	f.Add([]byte("5e-324"), math.Float64bits(math.Copysign(0, -1)))
	f.Fuzz(func(t *testing.T, text []byte, bits uint64) {
		var n Num
		_ = n.UnmarshalJSON(text)
		x := math.Float64frombits(bits)
		b, err := json.Marshal([]Num{Num(x)})
		if err != nil {
			t.Fatalf("marshal %v: %v", x, err)
		}
		var back []Num
		if err := json.Unmarshal(b, &back); err != nil || len(back) != 1 {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		got := float64(back[0])
		if math.IsNaN(x) != math.IsNaN(got) || !math.IsNaN(x) && math.Float64bits(got) != bits {
			t.Fatalf("%v (%#x) came back as %v (%#x) through %s", x, bits, got, math.Float64bits(got), b)
		}
	})
}
