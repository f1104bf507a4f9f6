package ratings

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"goldstone/internal/safetext"
)

// lineParser parses the lines of a text table whose layout is resolved to field indices.
// It is not safe for concurrent use (it reuses buffers and caches the last time it read).
type lineParser struct {
	sep    []byte
	quote  bool // CSV quoting within a line (a one-byte ASCII separator)
	fields int  // exact number of fields per line
	idx    [4]int
	names  [4]string // field names in errors
	intIDs bool
	time   timeParser
	split  [][]byte
}

// newLineParser returns the parser of lines with the given field indices (0-based) and
// field count, for layout l.
func newLineParser(l *Layout, idx [4]int, fields int, names [4]string) *lineParser {
	sep := []byte(l.Delimiter)
	return &lineParser{
		sep: sep, quote: len(sep) == 1 && sep[0] < 0x80, fields: fields, idx: idx, names: names,
		intIDs: l.IntIDs, time: timeParser{format: l.TimeFormat},
	}
}

// presetParser returns the parser of a MovieLens format's data lines.
func presetParser(f Format) *lineParser {
	l := f.Layout()
	return newLineParser(&l, [4]int{0, 1, 2, 3}, 4, [4]string{FieldUser, FieldItem, FieldRating, FieldTimestamp})
}

var errNotFinite = errors.New("not a finite number")

// splitLine cuts a line (without '\n' or '\r') into fields. A one-byte separator allows CSV
// quoting: a line holding a '"' is read by encoding/csv (lazy quotes; one line only).
func (p *lineParser) splitLine(line []byte) ([][]byte, error) {
	out := p.split[:0]
	if p.quote && bytes.IndexByte(line, '"') >= 0 {
		r := csv.NewReader(bytes.NewReader(line))
		r.Comma = rune(p.sep[0])
		r.LazyQuotes = true
		r.FieldsPerRecord = -1
		rec, err := r.Read()
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("quoted fields: %w", err)
		}
		if _, err := r.Read(); err == nil {
			return nil, errors.New("quoted fields: a quoted field spans lines (not supported)")
		}
		for _, f := range rec {
			out = append(out, []byte(f))
		}
		p.split = out
		return out, nil
	}
	for {
		var i int
		if len(p.sep) == 1 {
			i = bytes.IndexByte(line, p.sep[0])
		} else {
			i = bytes.Index(line, p.sep)
		}
		if i < 0 {
			out = append(out, line)
			break
		}
		out = append(out, line[:i])
		line = line[i+len(p.sep):]
	}
	p.split = out
	return out, nil
}

// parse parses one line (without its '\n'; trailing '\r's are ignored, see trimCR). For a text id
// (not an int32 code, see Layout.IntIDs) the rating's User or Item is 0 and user or item
// holds the id's text (which may alias line). Errors are *FieldError naming the field.
func (p *lineParser) parse(line []byte) (r Rating, user, item []byte, err error) {
	line = trimCR(line)
	fld, err := p.splitLine(line)
	if err != nil {
		return r, nil, nil, &FieldError{Err: err}
	}
	if len(fld) != p.fields {
		return r, nil, nil, &FieldError{Err: fmt.Errorf("want %d fields separated by %q, got %d", p.fields, p.sep, len(fld))}
	}
	if r.User, user, err = parseID(fld[p.idx[0]], p.intIDs); err != nil {
		return r, nil, nil, &FieldError{Field: p.names[0], Err: err}
	}
	if r.Item, item, err = parseID(fld[p.idx[1]], p.intIDs); err != nil {
		return r, nil, nil, &FieldError{Field: p.names[1], Err: err}
	}
	if r.Rating, err = parseRating(bytes.TrimSpace(fld[p.idx[2]])); err != nil {
		return r, nil, nil, &FieldError{Field: p.names[2], Err: err}
	}
	if r.Timestamp, err = p.time.parse(bytes.TrimSpace(fld[p.idx[3]])); err != nil {
		return r, nil, nil, &FieldError{Field: p.names[3], Err: err}
	}
	return r, user, item, nil
}

// parseID reads an id: with intIDs an int32; else a plain non-negative decimal int32 is
// its own code and any other (space-trimmed, non-empty) text is returned for the
// dictionary.
func parseID(b []byte, intIDs bool) (int32, []byte, error) {
	if intIDs {
		v, err := parseInt(b, 32)
		return int32(v), nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, nil, errors.New("empty id")
	}
	if v, ok := plainID(b); ok {
		return v, nil, nil
	}
	return 0, b, nil
}

// plainID reports whether b is a non-negative int32 written in plain decimal (no sign, no
// leading zero), the ids stored as themselves.
func plainID(b []byte) (int32, bool) {
	if len(b) == 0 || len(b) > 10 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// parseInt parses a decimal integer that fits in bits bits; a fast path handles plain digits
// (up to 10 for 32 bits, 18 for 64: no overflow of int64 on the way).
func parseInt(b []byte, bits int) (int64, error) {
	digits := 18
	if bits == 32 {
		digits = 10
	}
	if n := len(b); n > 0 && n <= digits {
		var v int64
		ok := true
		for _, c := range b {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			v = v*10 + int64(c-'0')
		}
		if ok {
			if bits == 32 && v > math.MaxInt32 {
				return 0, errOutOfRange
			}
			return v, nil
		}
	}
	v, err := strconv.ParseInt(string(b), 10, bits)
	if err != nil {
		return 0, numberError(b, err, fmt.Sprintf("an integer (%d bits)", bits))
	}
	return v, nil
}

// wordsError is a number's parse error in the user's words: what the text is not,
// wrapping strconv's sentinel (errors.Is(err, strconv.ErrSyntax) still holds).
type wordsError struct {
	msg string
	err error
}

func (e *wordsError) Error() string { return e.msg }
func (e *wordsError) Unwrap() error { return e.err }

// numberError says that b is not what (an integer, a number), or out of its range.
func numberError(b []byte, err error, what string) error {
	if errors.Is(err, strconv.ErrRange) {
		return &wordsError{fmt.Sprintf("%s is out of range for %s", safetext.Quote(b), what), strconv.ErrRange}
	}
	return &wordsError{fmt.Sprintf("%s is not %s", safetext.Quote(b), what), strconv.ErrSyntax}
}

var errOutOfRange = errors.New("value out of range")

// parseRating parses a rating; plain "d", "d.d" and "dd.d" take a fast path whose result
// equals strconv.ParseFloat(s, 32) (one correctly rounded division of exact values).
func parseRating(b []byte) (float32, error) {
	if n := len(b); n > 0 && n <= 4 {
		var num, den int32 = 0, 1
		dot := false
		ok := true
		for i, c := range b {
			switch {
			case c >= '0' && c <= '9':
				num = num*10 + int32(c-'0')
				if dot {
					den *= 10
				}
			case c == '.' && !dot && i > 0 && i < n-1:
				dot = true
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			return float32(num) / float32(den), nil
		}
	}
	v, err := strconv.ParseFloat(string(b), 32)
	if err != nil {
		return 0, numberError(b, err, "a number")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errNotFinite
	}
	return float32(v), nil
}

// maxUnixSeconds bounds a timestamp so that it fits in int64 milliseconds,
// the unit of the Parquet tables' TIMESTAMP column.
const maxUnixSeconds = math.MaxInt64 / 1000

// timeParser reads times in one format into unix seconds. For text formats it remembers
// the last text it parsed (dates repeat in logs sorted by time).
type timeParser struct {
	format string
	last   []byte
	lastV  int64
	cached bool
}

// rfc3339Layouts are tried in order for TimeRFC3339 (after a space at position 10 is read
// as the T): with a zone, then without (UTC); seconds optional; a bare date.
var rfc3339Layouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02",
}

func (tp *timeParser) parse(b []byte) (int64, error) {
	text := tp.format != TimeUnix && tp.format != TimeUnixMS && tp.format != ""
	if text && tp.cached && bytes.Equal(b, tp.last) {
		return tp.lastV, nil
	}
	v, err := tp.parseUncached(b)
	if err != nil {
		return 0, err
	}
	if v > maxUnixSeconds || v < -maxUnixSeconds {
		return 0, fmt.Errorf("%d is out of range: unix seconds within ±%d (stored as milliseconds)", v, int64(maxUnixSeconds))
	}
	if text { // numbers parse faster than they compare
		tp.last, tp.lastV, tp.cached = append(tp.last[:0], b...), v, true
	}
	return v, nil
}

func (tp *timeParser) parseUncached(b []byte) (int64, error) {
	switch tp.format {
	case TimeUnix, "":
		v, err := unixNumber(b, 1)
		return v, tp.notUnix(b, err)
	case TimeUnixMS:
		v, err := unixNumber(b, 1000)
		return v, tp.notUnix(b, err)
	case TimeRFC3339:
		s := string(b)
		if len(s) > 10 && s[10] == ' ' {
			s = s[:10] + "T" + s[11:]
		}
		for _, l := range rfc3339Layouts {
			if t, err := time.Parse(l, s); err == nil {
				return t.Unix(), nil
			}
		}
		return 0, fmt.Errorf("%s is not an RFC 3339 date-time or date (2006-01-02T15:04:05Z, 2006-01-02 15:04:05, 2006-01-02)", safetext.Quote(b))
	}
	t, err := time.Parse(tp.format, string(b))
	if err != nil {
		return 0, fmt.Errorf("%s does not match the time layout %q", safetext.Quote(b), tp.format)
	}
	return t.Unix(), nil
}

// unixNumber reads an integer count of 1/per seconds (a decimal fraction is allowed) and
// returns whole seconds, rounded down.
func unixNumber(b []byte, per int64) (int64, error) {
	v, err := parseInt(b, 64)
	if err == nil {
		if per == 1 {
			return v, nil
		}
		q := v / per
		if v%per < 0 {
			q--
		}
		return q, nil
	}
	f, ferr := strconv.ParseFloat(string(b), 64)
	if ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(string(b), "xXpP") {
		return 0, err
	}
	s := math.Floor(f / float64(per))
	if math.Abs(s) > maxUnixSeconds {
		return 0, fmt.Errorf("%s is out of range: unix seconds within ±%d", safetext.Cut(string(b)), int64(maxUnixSeconds))
	}
	return int64(s), nil
}

// notUnix is err (of unixNumber) naming the time_format setting and what to set it to
// when the text is no number.
func (tp *timeParser) notUnix(b []byte, err error) error {
	if err == nil || !errors.Is(err, strconv.ErrSyntax) {
		return err
	}
	f, what := tp.format, "a unix time in seconds"
	if f == "" {
		f = TimeUnix
	}
	if f == TimeUnixMS {
		what = "a unix time in milliseconds"
	}
	hint := `: set time_format = "rfc3339" for ISO dates, or to a Go time layout such as "02/01/2006 15:04"`
	s := string(b)
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	for _, l := range rfc3339Layouts {
		if _, err := time.Parse(l, s); err == nil {
			hint = `: it is an ISO date; set time_format = "rfc3339"`
			break
		}
	}
	return fmt.Errorf("%s is not %s (time_format = %q)%s", safetext.Quote(b), what, f, hint)
}
