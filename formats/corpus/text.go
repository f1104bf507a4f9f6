package corpus

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"goldstone/internal/safetext"
)

// Tokenizer splits text into word tokens: maximal runs of Unicode letters (with their
// combining marks), apostrophes (' and U+2019, the latter stored as ') and the runes of
// Extra. Everything else, including invalid UTF-8 bytes and control characters, separates
// tokens. The zero value lower-cases and trims apostrophes at both ends of a token, so that
// 'quoted' words lose their quotes ("nation's" keeps its own).
type Tokenizer struct {
	KeepCase            bool   // do not lower-case
	Extra               string // further runes allowed in tokens, e.g. "-" or "0123456789"
	KeepEdgeApostrophes bool   // keep leading and trailing apostrophes
}

func (tk *Tokenizer) inToken(r rune, started bool) bool {
	switch {
	case unicode.IsLetter(r), r == '\'', r == '\u2019':
		return true
	case started && unicode.IsMark(r):
		return true
	case tk.Extra != "" && strings.ContainsRune(tk.Extra, r):
		return r != utf8.RuneError
	}
	return false
}

// Append appends the tokens of text to dst and returns the extended slice.
func (tk *Tokenizer) Append(dst []string, text string) []string {
	start := -1
	emit := func(end int) {
		tok := text[start:end]
		start = -1
		if strings.ContainsRune(tok, '\u2019') {
			tok = strings.ReplaceAll(tok, "\u2019", "'")
		}
		if !tk.KeepEdgeApostrophes {
			tok = strings.Trim(tok, "'")
		}
		if tok == "" {
			return
		}
		if !tk.KeepCase {
			tok = strings.ToLower(tok)
		}
		dst = append(dst, tok)
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		ok := !(r == utf8.RuneError && size <= 1) && tk.inToken(r, start >= 0)
		switch {
		case ok && start < 0:
			start = i
		case !ok && start >= 0:
			emit(i)
		}
		i += size
	}
	if start >= 0 {
		emit(len(text))
	}
	return dst
}

// Document is one dated text.
type Document struct {
	Time int    // year
	Name string // file name, or "file:line" for CSV rows
	Text string
}

// YearOfName returns the year a file name starts with: its leading decimal digits.
func YearOfName(name string) (int, bool) {
	n := 0
	for n < len(name) && n < 9 && name[n] >= '0' && name[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, false
	}
	y, err := strconv.Atoi(name[:n])
	return y, err == nil
}

// ScanDir passes to fn, in file-name order, every regular file of dir whose name starts
// with a year (e.g. "1790_george_washington_n.txt"); other files (LICENSE, SHA256SUMS,
// hidden files) and sub-directories are skipped. Files are read as UTF-8 text.
func ScanDir(ctx context.Context, dir string, fn func(Document) error) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	found := false
	for _, e := range ents {
		y, ok := YearOfName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		found = true
		if err := fn(Document{Time: y, Name: e.Name(), Text: string(b)}); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("scan %s: no file name starts with a year", dir)
	}
	return nil
}

// Column names of a dated CSV file (and JSON Lines fields) unless DocFields name others.
const (
	FieldTime = "time"
	FieldText = "text"
)

// DocFields name the time and text columns of a dated CSV file or the fields of a JSON
// Lines object; empty names are FieldTime and FieldText.
type DocFields struct {
	Time, Text string
}

func (f DocFields) orDefault() DocFields {
	if f.Time == "" {
		f.Time = FieldTime
	}
	if f.Text == "" {
		f.Text = FieldText
	}
	return f
}

// ScanCSV passes to fn every row of a CSV file (plain, gzip or zstd) with a header holding
// the columns "time" and "text", in any order; other columns are ignored. See ScanCSVFields.
func ScanCSV(ctx context.Context, r io.Reader, name string, fn func(Document) error) error {
	return ScanCSVFields(ctx, r, name, DocFields{}, fn)
}

// ScanCSVFields passes to fn every row of a CSV file (plain, gzip or zstd) whose header
// holds the columns fields.Time and fields.Text, in any order; other columns are ignored.
// A time is a year (an integer) or a date from which the year is taken (see ParseYear).
func ScanCSVFields(ctx context.Context, r io.Reader, name string, fields DocFields, fn func(Document) error) error {
	dr, err := Decompress(r)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer dr.Close()
	return scanCSVText(ctx, dr, name, fields, fn)
}

// scanCSVText is ScanCSVFields on decompressed text.
func scanCSVText(ctx context.Context, text io.Reader, name string, fields DocFields, fn func(Document) error) error {
	fields = fields.orDefault()
	cr := csv.NewReader(text)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("read %s: header: %w", name, limitHint(err))
	}
	ti, xi := -1, -1
	for i, h := range head {
		switch strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) {
		case fields.Time:
			ti = i
		case fields.Text:
			xi = i
		}
	}
	if ti < 0 || xi < 0 {
		return &ParseError{File: name, Line: 1, Err: fmt.Errorf("header %s lacks columns %q and %q (time_field and text_field)", safetext.Quote(strings.Join(head, ",")), fields.Time, fields.Text)}
	}
	for n := 0; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &ParseError{File: name, Line: pe.Line, Err: pe.Err}
			}
			return readError(name, err)
		}
		line, _ := cr.FieldPos(ti)
		t, err := ParseYear(rec[ti])
		if err != nil {
			return &ParseError{File: name, Line: line, Field: fields.Time, Err: err}
		}
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(Document{Time: t, Name: fmt.Sprintf("%s:%d", name, line), Text: rec[xi]}); err != nil {
			return err
		}
	}
}

// yearLayouts are the date forms ParseYear reads after an integer year.
var yearLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02", "2006-01"}

// ParseYear reads the time of a document: a year (an integer, "1790") or a date or
// date-time in RFC 3339 / ISO 8601 form ("1790-01-08", "1790-01-08T12:00:00Z", "1790-01"),
// of which the year is kept.
func ParseYear(s string) (int, error) {
	s = strings.TrimSpace(s)
	if y, err := strconv.Atoi(s); err == nil {
		return y, nil
	}
	for _, l := range yearLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.Year(), nil
		}
	}
	return 0, fmt.Errorf("%s is neither an integer year nor a date (1790-01-08, 1790-01-08T12:00:00Z)", safetext.Quote(s))
}
