package movielens

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Format is the layout of a ratings text file.
type Format int

const (
	// FormatUnknown is the zero value; DetectFormat never returns it without an error.
	FormatUnknown Format = iota
	// FormatUData is ml-100k u.data: TAB-separated user, item, rating, timestamp; no header.
	FormatUData
	// FormatDat is ml-1m and ml-10m ratings.dat: UserID::MovieID::Rating::Timestamp; no header.
	FormatDat
	// FormatCSV is ratings.csv of ml-20m, ml-25m, ml-32m, ml-latest and ml-latest-small:
	// header userId,movieId,rating,timestamp, then comma-separated rows (half-star ratings).
	FormatCSV
)

// CSVHeader is the header line of FormatCSV files.
const CSVHeader = "userId,movieId,rating,timestamp"

// Field names used in parse errors, whatever the format.
const (
	FieldUser      = "userId"
	FieldItem      = "movieId"
	FieldRating    = "rating"
	FieldTimestamp = "timestamp"
)

func (f Format) String() string {
	switch f {
	case FormatUData:
		return "u.data"
	case FormatDat:
		return "ratings.dat"
	case FormatCSV:
		return "ratings.csv"
	}
	return "unknown"
}

func (f Format) sep() []byte {
	switch f {
	case FormatUData:
		return []byte{'\t'}
	case FormatDat:
		return []byte("::")
	case FormatCSV:
		return []byte{','}
	}
	panic(fmt.Sprintf("movielens: no separator for format %d", int(f)))
}

// hasHeader reports whether the first line of a file in format f is a header.
func (f Format) hasHeader() bool { return f == FormatCSV }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// DetectFormat detects the format from the first bytes of a (decompressed) ratings file:
// from its first line that is not blank (a byte-order mark is ignored). head must hold at
// least that whole line unless the file is shorter.
func DetectFormat(head []byte) (Format, error) {
	f, _, err := detectFormat(head)
	return f, err
}

// detectFormat is DetectFormat that also returns the 1-based number of the line it read
// (the header line of a ratings.csv).
func detectFormat(head []byte) (Format, int64, error) {
	head = bytes.TrimPrefix(head, utf8BOM)
	n := int64(1)
	line := head
	for {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			line = head
			break
		}
		line = head[:i]
		if !blankLine(line) {
			break
		}
		head = head[i+1:]
		n++
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	f, err := formatOfLine(line)
	return f, n, err
}

func formatOfLine(line []byte) (Format, error) {
	switch {
	case len(bytes.TrimSpace(line)) == 0:
		return FormatUnknown, errors.New("detect format: no ratings (the file is empty or blank)")
	case bytes.HasPrefix(line, []byte("userId")):
		if string(line) != CSVHeader {
			return FormatUnknown, fmt.Errorf("detect format: CSV header %q, want %q", line, CSVHeader)
		}
		return FormatCSV, nil
	case bytes.Contains(line, []byte("::")):
		return FormatDat, nil
	case bytes.IndexByte(line, '\t') >= 0:
		return FormatUData, nil
	}
	return FormatUnknown, fmt.Errorf("detect format: first line %.60q is neither u.data (TAB), ratings.dat (::) nor ratings.csv (header %s)", line, CSVHeader)
}

// FieldError is a parse error in one field of a line.
type FieldError struct {
	Field string // FieldUser, FieldItem, FieldRating or FieldTimestamp; "" for the line's shape
	Err   error
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return "field " + e.Field + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

var (
	errNotFinite   = errors.New("not a finite number")
	errOutOfRange  = errors.New("value out of range")
	errFieldsCount = errors.New("want 4 fields")
)

// ParseLine parses one line (without its '\n'; a trailing '\r' is ignored) of a file in
// format f. Errors are *FieldError naming the field.
func ParseLine(f Format, line []byte) (Rating, error) {
	return parseFields(line, f.sep())
}

// blankLine reports whether a line (with any '\r') holds only spaces; such lines are skipped.
func blankLine(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

func parseFields(line, sep []byte) (Rating, error) {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	var fld [4][]byte
	rest := line
	for k := 0; k < 3; k++ {
		var i int
		if len(sep) == 1 {
			i = bytes.IndexByte(rest, sep[0])
		} else {
			i = bytes.Index(rest, sep)
		}
		if i < 0 {
			return Rating{}, &FieldError{Err: fmt.Errorf("%w separated by %q, got %d", errFieldsCount, sep, k+1)}
		}
		fld[k], rest = rest[:i], rest[i+len(sep):]
	}
	if bytes.Contains(rest, sep) {
		return Rating{}, &FieldError{Err: fmt.Errorf("%w separated by %q, got more", errFieldsCount, sep)}
	}
	fld[3] = rest
	var r Rating
	u, err := parseInt(fld[0], 32)
	if err != nil {
		return Rating{}, &FieldError{Field: FieldUser, Err: err}
	}
	it, err := parseInt(fld[1], 32)
	if err != nil {
		return Rating{}, &FieldError{Field: FieldItem, Err: err}
	}
	v, err := parseRating(fld[2])
	if err != nil {
		return Rating{}, &FieldError{Field: FieldRating, Err: err}
	}
	ts, err := parseInt(fld[3], 64)
	if err != nil {
		return Rating{}, &FieldError{Field: FieldTimestamp, Err: err}
	}
	if ts > maxUnixSeconds || ts < -maxUnixSeconds {
		return Rating{}, &FieldError{Field: FieldTimestamp, Err: fmt.Errorf("%d is out of range: unix seconds within ±%d (stored as milliseconds)", ts, int64(maxUnixSeconds))}
	}
	r.User, r.Item, r.Rating, r.Timestamp = int32(u), int32(it), v, ts
	return r, nil
}

// parseInt parses a decimal integer that fits in bits bits; a fast path handles plain digits.
func parseInt(b []byte, bits int) (int64, error) {
	if n := len(b); n > 0 && n <= 9 {
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
	return strconv.ParseInt(string(b), 10, bits)
}

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
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errNotFinite
	}
	return float32(v), nil
}

// maxUnixSeconds bounds a timestamp so that it fits in int64 milliseconds,
// the unit of the Parquet tables' TIMESTAMP column.
const maxUnixSeconds = math.MaxInt64 / 1000
