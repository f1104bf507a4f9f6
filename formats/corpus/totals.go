package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"goldstone/internal/safetext"
)

// YearTotal is one record of a Google Books totals file.
type YearTotal struct {
	Year                  int
	Match, Pages, Volumes int64
}

// ParseTotals parses a totals file (plain, gzip or zstd): records year,match_count,page_count,
// volume_count separated by any white space (the official files put them all on one line,
// TAB-separated; one per line works too). name is used in errors.
func ParseTotals(r io.Reader, name string) ([]YearTotal, error) {
	dr, err := Decompress(r)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer dr.Close()
	br := bufio.NewReader(dr)
	var out []YearTotal
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read %s:%d: %w", name, line, limitHint(err))
		}
		for k, rec := range bytes.Fields(b) {
			f := bytes.Split(rec, []byte{','})
			fail := func(field string, e error) error {
				return &ParseError{File: name, Line: line, Field: fmt.Sprintf("%s (record %d)", field, k+1), Err: e}
			}
			if len(f) != 4 {
				return nil, &ParseError{File: name, Line: line, Err: fmt.Errorf("record %d: want year,match_count,page_count,volume_count, got %s", k+1, safetext.Quote(rec))}
			}
			var v [4]int64
			for i, field := range []string{FieldYear, FieldMatch, FieldPages, FieldVolumes} {
				bits := uint(64)
				if i == 0 {
					bits = 32
				}
				x, e := parseInt(f[i], bits)
				if e == nil && x < 0 {
					e = errNegative
				}
				if e != nil {
					return nil, fail(field, e)
				}
				v[i] = x
			}
			out = append(out, YearTotal{Year: int(v[0]), Match: v[1], Pages: v[2], Volumes: v[3]})
		}
		if err == io.EOF {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("parse %s: %w", name, errors.New("no records"))
	}
	return out, nil
}

// ReadTotalsFile is ParseTotals on the file at path.
func ReadTotalsFile(path string) ([]YearTotal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTotals(f, path)
}
