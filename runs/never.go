package runs

import (
	"fmt"
	"math"
	"strconv"
)

// Never is the value of a censored metric: a threshold the trial never
// reached within its run (steps_to_excess_1, steps_to_gap_1pct, ...). It is
// +Inf, one value in every output, so that it sorts after every number
// and an aggregate over it says so instead of skipping it:
//
//	where                         spelling              what it does
//	Go (experiment.Summary)           math.Inf(1)           sorts last
//	SQLite (summaries, views)     REAL +Inf (9e999)     ORDER BY: last; avg(): Inf; min(): the fastest
//	Parquet (runner export)       DOUBLE +Inf           DuckDB median(): Inf when half never reach
//	CSV (results, diff)           inf                   pandas, DuckDB, R and Go read it as +Inf
//	JSON (results, diff, summary) "+Inf"                JSON has no infinity (the summary.json convention)
//	text (tables, diff, summary.md, HTML)  never         counted apart in the aggregates
//
// NaN is something else: no value (a metric that does not apply); SQLite
// stores it as NULL, CSV as an empty field, JSON as null, text as "NaN".
var Never = math.Inf(1)

// IsNever reports whether v is Never.
func IsNever(v float64) bool { return math.IsInf(v, 1) }

// ValueText renders a summary value for people: "never" for Never, "-Inf",
// "NaN", else the number with prec significant digits (-1: the shortest
// text that reads back the same).
func ValueText(v float64, prec int) string {
	switch {
	case IsNever(v):
		return "never"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', prec, 64)
}

// CSVValue renders a value for a CSV field: "" for NaN (CSV readers take an
// empty field as missing and keep the column numeric), "inf" and "-inf"
// for the infinities, else the shortest text that reads back the same.
func CSVValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// JSONValue is a float64 that encodes as JSON the way every JSON file of
// the project does: a number, null for NaN, and the strings "+Inf" and
// "-Inf" for the infinities (Never is "+Inf").
type JSONValue float64

// MarshalJSON implements json.Marshaler.
func (v JSONValue) MarshalJSON() ([]byte, error) {
	f := float64(v)
	switch {
	case math.IsNaN(f):
		return []byte("null"), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler: it reads what MarshalJSON
// writes (and "NaN").
func (v *JSONValue) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch s {
	case "null", `"NaN"`:
		*v = JSONValue(math.NaN())
		return nil
	case `"+Inf"`:
		*v = JSONValue(math.Inf(1))
		return nil
	case `"-Inf"`:
		*v = JSONValue(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("value %s: want a number, null, \"+Inf\" or \"-Inf\"", s)
	}
	*v = JSONValue(f)
	return nil
}
