package ratings

import (
	"bytes"
	"errors"
	"fmt"

	"goldstone/internal/safetext"
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
	for _, p := range Layouts.All() {
		if p.format == f {
			return p.layout.Name
		}
	}
	return "unknown"
}

func (f Format) sep() []byte { return []byte(f.Layout().Delimiter) }

// UTF8BOM is the byte-order mark a text table may start with (ignored).
var UTF8BOM = []byte{0xEF, 0xBB, 0xBF}

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
	head = bytes.TrimPrefix(head, UTF8BOM)
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
	f, err := formatOfLine(trimCR(line))
	return f, n, err
}

func formatOfLine(line []byte) (Format, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return FormatUnknown, errors.New("detect format: no ratings (the file is empty or blank)")
	}
	for _, p := range Layouts.All() {
		if ok, err := p.detect(line); err != nil {
			return FormatUnknown, fmt.Errorf("detect format: %w", err)
		} else if ok {
			return p.format, nil
		}
	}
	return FormatUnknown, fmt.Errorf("detect format: first line %s is neither u.data (TAB), ratings.dat (::) nor ratings.csv (header %s); for a table of another layout name its columns (user_column, item_column, rating_column, time_column)", safetext.Quote(line), CSVHeader)
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

// ParseLine parses one data line (without its '\n'; trailing '\r's are ignored) of a file
// in format f. Errors are *FieldError naming the field.
func ParseLine(f Format, line []byte) (Rating, error) {
	r, _, _, err := presetParser(f).parse(line)
	return r, err
}

// trimCR drops the carriage returns that end a line: one of a "\r\n" line end, or more
// where a CRLF file went through a second LF-to-CRLF conversion ("\r\r\n").
func trimCR(line []byte) []byte { return bytes.TrimRight(line, "\r") }

// blankLine reports whether a line (with any '\r') holds only spaces; such lines are skipped.
func blankLine(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }
