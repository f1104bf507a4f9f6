package runs

import (
	"database/sql"
	"fmt"
	"math"
	"time"
)

// Value kinds stored next to every metric and summary value (column kind).
const (
	kindFinite  = "finite"
	kindNaN     = "nan"
	kindPosInf  = "+inf"
	kindNegInf  = "-inf"
	kindNegZero = "-0"
)

// encodeValue returns the value to store in a REAL column and its kind.
// NaN is stored as NULL (SQLite turns NaN into NULL anyway); infinities are
// stored as such (SQLite keeps them, printing 9e999/-9e999 as Inf/-Inf);
// -0 is stored as 0 with kind "-0" because SQLite stores integral REALs as
// integers and would lose the sign.
func encodeValue(v float64) (any, string) {
	switch {
	case math.IsNaN(v):
		return nil, kindNaN
	case math.IsInf(v, 1):
		return v, kindPosInf
	case math.IsInf(v, -1):
		return v, kindNegInf
	case v == 0 && math.Signbit(v):
		return 0.0, kindNegZero
	}
	return v, kindFinite
}

// decodeValue inverts encodeValue.
func decodeValue(v sql.NullFloat64, kind string) (float64, error) {
	switch kind {
	case kindNaN:
		return math.NaN(), nil
	case kindPosInf:
		return math.Inf(1), nil
	case kindNegInf:
		return math.Inf(-1), nil
	case kindNegZero:
		return math.Copysign(0, -1), nil
	case kindFinite:
		if !v.Valid {
			return 0, fmt.Errorf("value kind %q with NULL value", kind)
		}
		return v.Float64, nil
	}
	return 0, fmt.Errorf("unknown value kind %q", kind)
}

// timeLayout is fixed-width so that stored times sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func encodeTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(timeLayout)
}

func decodeTime(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s.String, err)
	}
	return t.UTC(), nil
}
