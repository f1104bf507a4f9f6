package batch

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Num is a float64 that survives JSON exactly, including NaN, ±Inf and -0:
// finite values are numbers in the shortest form that reads back to the
// same bits; NaN is null and the infinities the strings "+Inf" and "-Inf"
// (the convention of summary.json, trialio.WriteSummary). The string "NaN"
// is read as NaN too.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	v := float64(n)
	switch {
	case math.IsNaN(v):
		return []byte(`null`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*n = Num(math.NaN())
		case "+Inf":
			*n = Num(math.Inf(1))
		case "-Inf":
			*n = Num(math.Inf(-1))
		default:
			return fmt.Errorf("number %q: want a number, null, \"NaN\", \"+Inf\" or \"-Inf\"", s)
		}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("number %s: %w", b, err)
	}
	*n = Num(v)
	return nil
}
