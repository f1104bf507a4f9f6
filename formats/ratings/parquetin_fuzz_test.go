package ratings

import (
	"math"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// FuzzParquetConverter feeds the converter of Parquet input rows (ratings
// Parquet input -> Rating) values of every physical kind its columns may
// have, under every time format and column annotation: whatever it gets,
// it returns a Rating or an error naming the field, never panics, and what
// it returns is sound: a finite rating, a time within ±maxUnixSeconds, no
// text id under int ids, and text ids that lie in the arena.
func FuzzParquetConverter(f *testing.F) {
	f.Add(uint8(0), false, int64(1), []byte("u1"), 4.5, int64(1260759144), []byte("2020-01-02"), uint8(0), uint8(0))
	f.Add(uint8(0x1b), true, int64(-7), []byte("x"), math.NaN(), int64(math.MaxInt64), []byte("1e300"), uint8(2), uint8(3))
	f.Add(uint8(0xff), false, int64(math.MinInt64), []byte(""), math.Inf(1), int64(math.MinInt64), []byte("\xff"), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, kinds uint8, intIDs bool, id int64, text []byte, rating float64, ts int64, tsText []byte, format, annot uint8) {
		l := &Layout{IntIDs: intIDs, TimeFormat: []string{TimeUnix, TimeUnixMS, TimeRFC3339, "2006-01-02"}[format%4]}
		var cols [4]parquetColumn
		for k := range cols {
			cols[k].name = [4]string{FieldUser, FieldItem, FieldRating, FieldTimestamp}[k]
		}
		switch annot % 4 {
		case 1:
			cols[3].date = true
		case 2:
			cols[3].perSecond = []int64{1000, 1e6, 1e9}[int(kinds)%3]
		case 3:
			cols[2].scale = 100
		}
		idVal := func(sel uint8) parquet.Value {
			switch sel % 3 {
			case 0:
				return parquet.Int32Value(int32(id))
			case 1:
				return parquet.Int64Value(id)
			}
			return parquet.ByteArrayValue(text)
		}
		var v [4]parquet.Value
		v[0], v[1] = idVal(kinds), idVal(kinds>>2)
		switch (kinds >> 4) % 5 {
		case 0:
			v[2] = parquet.DoubleValue(rating)
		case 1:
			v[2] = parquet.FloatValue(float32(rating))
		case 2:
			v[2] = parquet.Int32Value(int32(ts))
		case 3:
			v[2] = parquet.Int64Value(ts)
		default:
			v[2] = parquet.ByteArrayValue(text)
		}
		switch (kinds >> 5) % 6 {
		case 0:
			v[3] = parquet.Int64Value(ts)
		case 1:
			v[3] = parquet.Int32Value(int32(ts))
		case 2:
			v[3] = parquet.DoubleValue(rating)
		case 3:
			v[3] = parquet.FloatValue(float32(rating))
		case 4:
			v[3] = parquet.Int96Value(deprecated.Int96{uint32(ts), uint32(ts >> 32), uint32(id)})
		default:
			v[3] = parquet.ByteArrayValue(tsText)
		}
		if annot&4 != 0 {
			v[int(kinds)%4] = parquet.NullValue()
		}
		var texts []textID
		var arena []byte
		r, err := newParquetConverter(l, cols).row(v, 0, &texts, &arena)
		if err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("error %v (%T), want a *FieldError", err, err)
			}
			return
		}
		if math.IsNaN(float64(r.Rating)) || math.IsInf(float64(r.Rating), 0) {
			t.Fatalf("rating %v accepted", r.Rating)
		}
		if r.Timestamp > maxUnixSeconds || r.Timestamp < -maxUnixSeconds {
			t.Fatalf("time %d accepted", r.Timestamp)
		}
		if intIDs && len(texts) > 0 {
			t.Fatalf("ids %d, %d: %d text ids with int ids", r.User, r.Item, len(texts))
		}
		for _, tx := range texts {
			if tx.off < 0 || tx.end < tx.off || int(tx.end) > len(arena) {
				t.Fatalf("text id %+v outside the arena of %d bytes", tx, len(arena))
			}
		}
	})
}
