package ratings

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"goldstone/internal/safetext"
)

// Layout describes a ratings table: where the user, item, rating and time of a row are,
// how the fields of a text file are separated, whether a header line names them, and how
// times are written. The MovieLens releases are presets (Format.Layout); a user's own
// table is described by TableSettings.
type Layout struct {
	// Name is the preset's name (u.data, ratings.dat, ratings.csv) or "custom".
	Name string
	// Delimiter separates the fields of a line. A one-byte delimiter allows CSV quoting
	// ("a, b" with "" for a quote) inside a line; a longer one (::) does not.
	Delimiter string
	// Header: the first non-blank line names the columns.
	Header bool
	// User, Item, Rating and Time are the columns, by header name or 1-based position.
	User, Item, Rating, Time Column
	// TimeFormat is TimeUnix, TimeUnixMS, TimeRFC3339 or a Go time layout.
	TimeFormat string
	// IntIDs: ids must be int32 (the MovieLens presets; anything else is an error). Else
	// an id is any text: a plain non-negative decimal int32 is stored as itself, any other
	// text gets a negative code in order of first appearance (see IDName).
	IntIDs bool
	// Fields is the number of fields every line must have; 0: as many as the header or,
	// without one, the first line.
	Fields int
	// OnlyTimeFormat: a custom layout whose settings left the columns, the delimiter
	// and the header at their defaults, giving only time_format: a ratings.dat or
	// u.data file is still recognised, with that time format (resolveText).
	OnlyTimeFormat bool
}

// Time formats of Layout.TimeFormat (and the time_format setting). Any other value is a Go
// time layout (time.Parse; no zone in it means UTC).
const (
	TimeUnix    = "unix"    // seconds since 1970-01-01 UTC (a decimal fraction is floored)
	TimeUnixMS  = "unix_ms" // milliseconds since 1970-01-01 UTC (floored to seconds)
	TimeRFC3339 = "rfc3339" // RFC 3339 / ISO 8601 date-times (T or a space; no zone: UTC) and dates 2006-01-02
)

// LayoutCustom is the Name of a layout given by settings rather than a preset.
const LayoutCustom = "custom"

// Column is a column of a ratings table: by header name, or by 1-based position.
type Column struct {
	Name string // "" when given by position
	Pos  int    // 1-based; 0 when given by name
}

// ParseColumn reads a column setting: a decimal number is a 1-based position, anything
// else a header name.
func ParseColumn(s string) (Column, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Column{}, errors.New("empty column")
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return Column{}, fmt.Errorf("column position %d: positions start at 1", n)
		}
		return Column{Pos: n}, nil
	}
	return Column{Name: s}, nil
}

func (c Column) String() string {
	if c.Name != "" {
		return strconv.Quote(c.Name)
	}
	return fmt.Sprintf("column %d", c.Pos)
}

// Layout returns the preset of a MovieLens format. It panics on FormatUnknown.
func (f Format) Layout() Layout {
	for _, p := range Layouts.All() {
		if p.format == f {
			return p.layout
		}
	}
	panic(fmt.Sprintf("ratings: no layout for format %d", int(f)))
}

func presetFormat(name string) (Format, bool) {
	p, err := Layouts.Lookup(name)
	return p.format, err == nil
}

// TableSettings describe the ratings table (settings of the ingest stage). With every
// setting at its default the table is one of the MovieLens layouts, recognised from its
// first line.
type TableSettings struct {
	Layout     string `set:"layout" default:"auto" doc:"ratings table layout: a MovieLens preset (u.data, ratings.dat, ratings.csv) or auto: recognised from the first line when the other table settings keep their defaults, else as they say"`
	User       string `set:"user_column" default:"" ints:"text" doc:"ratings table: the user id column, a header name or a 1-based position (empty: userId with a header, 1 without)"`
	Item       string `set:"item_column" default:"" ints:"text" doc:"ratings table: the item id column, name or position (empty: movieId with a header, 2 without)"`
	Rating     string `set:"rating_column" default:"" ints:"text" doc:"ratings table: the rating column, name or position (empty: rating with a header, 3 without)"`
	Time       string `set:"time_column" default:"" ints:"text" doc:"ratings table: the time column, name or position (empty: timestamp with a header, 4 without)"`
	Delimiter  string `set:"delimiter" default:"," doc:"ratings table: field separator of a text table (any string; tab or \\t for a TAB)"`
	Header     bool   `set:"header" default:"true" doc:"ratings table: the first line of a text table names the columns"`
	TimeFormat string `set:"time_format" default:"unix" doc:"ratings table: unix (seconds), unix_ms, rfc3339 (ISO date-times and dates) or a Go time layout such as 2006-01-02"`
}

// Values implements settings.Enumerator: layout is auto or a registered preset
// (Layouts).
func (TableSettings) Values(key string) []string {
	if key == "layout" {
		return append([]string{"auto"}, Layouts.Names()...)
	}
	return nil
}

// PruneKeys keeps the settings the ingest reads: none for a recognised MovieLens layout,
// the preset's name for a named one, the table settings but layout for a custom table.
// (A MovieLens experiment keeps its trial ids and cache keys.)
func (s TableSettings) PruneKeys(m map[string]any) {
	custom := s.Custom()
	for _, k := range []string{"layout", "user_column", "item_column", "rating_column", "time_column", "delimiter", "header", "time_format"} {
		switch {
		case k == "layout" && s.Layout != "auto" && s.Layout != "":
		case k != "layout" && custom:
		default:
			delete(m, k)
		}
	}
}

// DefaultTableSettings are the defaults of TableSettings (a MovieLens table, recognised).
var DefaultTableSettings = TableSettings{Layout: "auto", Delimiter: ",", Header: true, TimeFormat: TimeUnix}

// Custom reports whether the settings describe a table of their own rather than a
// recognised MovieLens layout.
func (s TableSettings) Custom() bool {
	d := DefaultTableSettings
	return s.User != "" || s.Item != "" || s.Rating != "" || s.Time != "" ||
		s.Delimiter != d.Delimiter || s.Header != d.Header || s.TimeFormat != d.TimeFormat
}

// Resolve returns the layout the settings describe, or nil for "recognise the MovieLens
// layout from the first line" (layout = auto with every other setting at its default).
// Errors name the setting.
func (s TableSettings) Resolve() (*Layout, error) {
	if s.Layout != "auto" && s.Layout != "" {
		f, ok := presetFormat(s.Layout)
		if !ok {
			return nil, fmt.Errorf("layout %q: want auto or one of %s", s.Layout, strings.Join(Layouts.Names(), ", "))
		}
		if s.Custom() {
			return nil, fmt.Errorf("layout = %q fixes the columns, delimiter, header and time format; leave user_column, item_column, rating_column, time_column, delimiter, header and time_format at their defaults, or use layout = \"auto\"", s.Layout)
		}
		l := f.Layout()
		return &l, nil
	}
	if !s.Custom() {
		return nil, nil
	}
	d := DefaultTableSettings
	l := Layout{Name: LayoutCustom, Header: s.Header,
		OnlyTimeFormat: s.User == "" && s.Item == "" && s.Rating == "" && s.Time == "" && s.Delimiter == d.Delimiter && s.Header == d.Header}
	var err error
	if l.Delimiter, err = parseDelimiter(s.Delimiter); err != nil {
		return nil, fmt.Errorf("delimiter: %w", err)
	}
	if l.TimeFormat, err = checkTimeFormat(s.TimeFormat); err != nil {
		return nil, fmt.Errorf("time_format: %w", err)
	}
	mlNames := [4]string{FieldUser, FieldItem, FieldRating, FieldTimestamp}
	for k, c := range []struct {
		key, val string
		dst      *Column
	}{{"user_column", s.User, &l.User}, {"item_column", s.Item, &l.Item}, {"rating_column", s.Rating, &l.Rating}, {"time_column", s.Time, &l.Time}} {
		if c.val == "" { // the MovieLens column
			if s.Header {
				*c.dst = Column{Name: mlNames[k]}
			} else {
				*c.dst = Column{Pos: k + 1}
			}
			continue
		}
		col, err := ParseColumn(c.val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.key, err)
		}
		if col.Name != "" && !s.Header {
			return nil, fmt.Errorf("%s = %q: a column name needs header = true; without a header give its 1-based position", c.key, c.val)
		}
		*c.dst = col
	}
	cols := []Column{l.User, l.Item, l.Rating, l.Time}
	keys := []string{"user_column", "item_column", "rating_column", "time_column"}
	for i := range cols {
		for j := range i {
			if cols[i] == cols[j] {
				return nil, fmt.Errorf("%s and %s both name %s", keys[j], keys[i], cols[i])
			}
		}
	}
	return &l, nil
}

// parseDelimiter reads a delimiter setting: "tab" and the escape \t stand for a TAB.
func parseDelimiter(s string) (string, error) {
	switch s {
	case "tab", `\t`:
		return "\t", nil
	case "":
		return "", errors.New("empty")
	}
	if strings.ContainsAny(s, "\"\r\n") {
		return "", fmt.Errorf("%q: a delimiter cannot hold a quote or a line break", s)
	}
	return s, nil
}

// checkTimeFormat accepts unix, unix_ms, rfc3339 or a Go time layout that writes and reads
// back at least a date (year, month and day).
func checkTimeFormat(f string) (string, error) {
	switch f {
	case TimeUnix, TimeUnixMS, TimeRFC3339:
		return f, nil
	case "":
		return "", errors.New("empty")
	}
	ref := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	back, err := time.Parse(f, ref.Format(f))
	if err != nil || back.Year() != 2001 || back.Month() != 2 || back.Day() != 3 {
		return "", fmt.Errorf("%q is neither unix, unix_ms, rfc3339 nor a Go time layout with a year, month and day (such as 2006-01-02 or 02/01/2006 15:04)", f)
	}
	return f, nil
}

// fieldNames returns the names of the four columns for messages: the header's names when
// resolved against one, else the layout's.
func (l *Layout) columns() [4]Column { return [4]Column{l.User, l.Item, l.Rating, l.Time} }

// columnKeys are the settings that name the four columns, for messages.
var columnKeys = [4]string{"user_column", "item_column", "rating_column", "time_column"}

// resolveHeader returns the 0-based field index of each column in a header line's fields.
func (l *Layout) resolveHeader(head []string) ([4]int, error) {
	var idx [4]int
	names := make([]string, len(head))
	for i, h := range head {
		names[i] = strings.TrimSpace(h)
	}
	for k, c := range l.columns() {
		if c.Name == "" {
			if c.Pos > len(names) {
				return idx, fmt.Errorf("%s: the header has %d columns", c, len(names))
			}
			idx[k] = c.Pos - 1
			continue
		}
		i := slices.Index(names, c.Name)
		if i < 0 {
			hint := ""
			if slices.ContainsFunc(names, func(n string) bool { _, err := strconv.ParseFloat(n, 64); return err == nil }) {
				hint = " (is the first line data? then set header = false and give positions)"
			}
			return idx, fmt.Errorf("header %s has no column %s (%s); its columns: %s%s", safetext.Quote(strings.Join(head, l.Delimiter)), c, l.key(k), safetext.Cut(strings.Join(names, ", ")), hint)
		}
		idx[k] = i
	}
	return idx, nil
}

// key names the setting of column k in messages: the preset for a MovieLens layout.
func (l *Layout) key(k int) string {
	if l.Name != LayoutCustom {
		return "layout " + l.Name
	}
	return columnKeys[k]
}

// headerHint says what to change when the first line lacks a column of a custom layout:
// the delimiter that would split it into the columns named (or enough fields for the
// positions given), or that layout auto stopped recognising a MovieLens file once a
// table setting was given.
func (l *Layout) headerHint(line []byte) string {
	if l.Name != LayoutCustom {
		return ""
	}
	var want []string
	maxPos := 0
	for _, c := range l.columns() {
		if c.Name != "" {
			want = append(want, c.Name)
		}
		maxPos = max(maxPos, c.Pos)
	}
	for _, d := range []string{",", ";", "\t", "|", "::", " "} {
		if d == l.Delimiter {
			continue
		}
		var names []string
		for _, f := range strings.Split(string(line), d) {
			names = append(names, strings.Trim(strings.TrimSpace(f), `"`))
		}
		fits := len(names) > 1 && len(names) >= maxPos && !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(names, w) })
		if fits && (l.Header || !strings.Contains(string(line), "::") || d == "::") {
			shown := d
			if d == "\t" {
				shown = "tab"
			}
			return fmt.Sprintf("; the line has these columns when split at %q: set delimiter = %q", shown, shown)
		}
	}
	if f, err := formatOfLine(line); err == nil && f != FormatCSV {
		p := f.Layout()
		return fmt.Sprintf("; this looks like a MovieLens %s file, which layout = \"auto\" recognises only while the table settings keep their defaults: "+
			"with one given, set the others too (delimiter = %q, header = false)", f, strings.ReplaceAll(p.Delimiter, "\t", "tab"))
	}
	return ""
}
