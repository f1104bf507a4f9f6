package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"goldstone/internal/safetext"
)

// ScanJSONL passes to fn the document of every line of a JSON Lines file (plain, gzip or
// zstd): one JSON object per line, whose field fields.Time holds the date (a year as a
// number or a string, or a date or date-time string, see ParseYear) and fields.Text the
// text (a string); other fields are ignored, blank lines skipped. Errors are *ParseError
// naming the line and the field.
func ScanJSONL(ctx context.Context, r io.Reader, name string, fields DocFields, fn func(Document) error) error {
	return scanJSONL(ctx, r, name, fields, 0, fn)
}

// scanJSONL is ScanJSONL; limit > 0 stops after that many documents.
func scanJSONL(ctx context.Context, r io.Reader, name string, fields DocFields, limit int, fn func(Document) error) error {
	dr, err := Decompress(r)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer dr.Close()
	return scanJSONLText(ctx, dr, name, fields, limit, fn)
}

// scanJSONLText is scanJSONL on decompressed text.
func scanJSONLText(ctx context.Context, text io.Reader, name string, fields DocFields, limit int, fn func(Document) error) error {
	fields = fields.orDefault()
	br := bufio.NewReaderSize(text, 1<<16)
	docs := 0
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s:%d: %w", name, line, limitHint(err))
		}
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(bytes.TrimSpace(b)) > 0 {
			d, perr := jsonDoc(b, fields)
			if perr != nil {
				perr.File, perr.Line = name, line
				return perr
			}
			d.Name = name + ":" + strconv.Itoa(line)
			if line&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := fn(d); err != nil {
				return err
			}
			if docs++; limit > 0 && docs >= limit {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// jsonDoc reads one JSON Lines object.
func jsonDoc(b []byte, fields DocFields) (Document, *ParseError) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Document{}, &ParseError{Err: fmt.Errorf("not a JSON object: %v (at byte %d)", se, se.Offset)}
		}
		return Document{}, &ParseError{Err: fmt.Errorf("not a JSON object: %v", err)}
	}
	raw, ok := obj[fields.Time]
	if !ok {
		return Document{}, &ParseError{Field: fields.Time, Err: fmt.Errorf("missing (the object's fields: %s; set time_field)", keysOf(obj))}
	}
	var d Document
	switch t := bytes.TrimSpace(raw); {
	case len(t) > 0 && t[0] == '"':
		var str string
		if err := json.Unmarshal(t, &str); err != nil {
			return d, &ParseError{Field: fields.Time, Err: err}
		}
		y, err := ParseYear(str)
		if err != nil {
			return d, &ParseError{Field: fields.Time, Err: err}
		}
		d.Time = y
	case len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9'):
		y, err := strconv.Atoi(string(t))
		if err != nil {
			return d, &ParseError{Field: fields.Time, Err: fmt.Errorf("%s is not an integer year", safetext.Cut(string(t)))}
		}
		d.Time = y
	default:
		return d, &ParseError{Field: fields.Time, Err: fmt.Errorf("%s is neither a number nor a string", safetext.Cut(string(t)))}
	}
	raw, ok = obj[fields.Text]
	if !ok {
		return Document{}, &ParseError{Field: fields.Text, Err: fmt.Errorf("missing (the object's fields: %s; set text_field)", keysOf(obj))}
	}
	if err := json.Unmarshal(raw, &d.Text); err != nil {
		return Document{}, &ParseError{Field: fields.Text, Err: fmt.Errorf("%s is not a string", safetext.Cut(string(raw)))}
	}
	return d, nil
}

func keysOf(obj map[string]json.RawMessage) string {
	keys := slices.Sorted(maps.Keys(obj))
	if len(keys) == 0 {
		return "none"
	}
	for i, k := range keys {
		keys[i] = strconv.Quote(k)
	}
	return safetext.Cut(strings.Join(keys, ", "))
}

// IngestJSONL tokenises the documents of the JSON Lines file src (see ScanJSONL),
// decompressed within lim, into a text store at dst.
func IngestJSONL(ctx context.Context, src, dst string, fields DocFields, tk Tokenizer, lim ReadLimits) (IngestStats, error) {
	text, err := openText(src, lim)
	if err != nil {
		return IngestStats{}, err
	}
	defer text.Close()
	return ingestDocs(dst, tk, func(fn func(Document) error) error { return scanJSONLText(ctx, text, src, fields, 0, fn) })
}

// IngestCSVFields is IngestCSV with the time and text columns named by fields, the file
// decompressed within lim.
func IngestCSVFields(ctx context.Context, src, dst string, fields DocFields, tk Tokenizer, lim ReadLimits) (IngestStats, error) {
	text, err := openText(src, lim)
	if err != nil {
		return IngestStats{}, err
	}
	defer text.Close()
	return ingestDocs(dst, tk, func(fn func(Document) error) error { return scanCSVText(ctx, text, src, fields, fn) })
}
