package ratings

import (
	"bytes"
	"fmt"

	"goldstone/formats"
	"goldstone/internal/safetext"
)

// preset is a registered text layout of a ratings table (the MovieLens releases): its
// Format, its Layout, and how its first non-blank line is recognised (detect: true when
// the line is of this layout, an error when it is but is malformed). The detectors of
// the presets exclude each other, so their order does not matter.
type preset struct {
	format Format
	layout Layout
	detect func(line []byte) (bool, error)
}

// Layouts is the registry of the preset layouts, by name (the values of the layout
// setting besides auto), in the order the docs list them. A new preset is a Format
// constant and one Register line here; a table of any other layout needs no code
// (TableSettings). Parquet input is recognised from its magic bytes (LayoutParquet).
var Layouts = formats.NewRegistry[preset]("layout")

var csvPrefix = []byte("userId")

func init() {
	pos := func(i int) Column { return Column{Pos: i} }
	positional := func(name, delim string) Layout {
		return Layout{Name: name, Delimiter: delim, User: pos(1), Item: pos(2), Rating: pos(3), Time: pos(4), TimeFormat: TimeUnix, IntIDs: true, Fields: 4}
	}
	Layouts.Register("u.data", preset{format: FormatUData, layout: positional("u.data", "\t"),
		detect: func(line []byte) (bool, error) {
			return bytes.IndexByte(line, '\t') >= 0 && !bytes.Contains(line, []byte("::")) && !bytes.HasPrefix(line, csvPrefix), nil
		}})
	Layouts.Register("ratings.dat", preset{format: FormatDat, layout: positional("ratings.dat", "::"),
		detect: func(line []byte) (bool, error) {
			return bytes.Contains(line, []byte("::")) && !bytes.HasPrefix(line, csvPrefix), nil
		}})
	Layouts.Register("ratings.csv", preset{format: FormatCSV,
		layout: Layout{Name: "ratings.csv", Delimiter: ",", Header: true,
			User: Column{Name: FieldUser}, Item: Column{Name: FieldItem}, Rating: Column{Name: FieldRating}, Time: Column{Name: FieldTimestamp},
			TimeFormat: TimeUnix, IntIDs: true, Fields: 4},
		detect: func(line []byte) (bool, error) {
			if !bytes.HasPrefix(line, csvPrefix) {
				return false, nil
			}
			if string(line) != CSVHeader {
				return false, fmt.Errorf("CSV header %s, want %q", safetext.Quote(line), CSVHeader)
			}
			return true, nil
		}})
}
