package runs

import (
	"encoding/json"
	"math"
	"testing"
)

// FuzzJSONValue: JSONValue reads any JSON text without panicking, and
// every float64 survives MarshalJSON then UnmarshalJSON bit for bit (NaN as
// a NaN), inside a JSON document as well.
func FuzzJSONValue(f *testing.F) {
	for _, s := range []string{"1", "-0", "null", `"+Inf"`, `"-Inf"`, `"NaN"`, "1e400", `"x"`, "", "[1]"} {
		f.Add([]byte(s), math.Float64bits(0.1))
	}
	f.Add([]byte("5e-324"), math.Float64bits(math.Copysign(0, -1)))
	f.Fuzz(func(t *testing.T, text []byte, bits uint64) {
		var v JSONValue
		_ = v.UnmarshalJSON(text)
		x := math.Float64frombits(bits)
		b, err := json.Marshal(map[string]JSONValue{"v": JSONValue(x)})
		if err != nil {
			t.Fatalf("marshal %v: %v", x, err)
		}
		var back map[string]JSONValue
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		got := float64(back["v"])
		if math.IsNaN(x) != math.IsNaN(got) || !math.IsNaN(x) && math.Float64bits(got) != bits {
			t.Fatalf("%v (%#x) came back as %v (%#x) through %s", x, bits, got, math.Float64bits(got), b)
		}
	})
}
