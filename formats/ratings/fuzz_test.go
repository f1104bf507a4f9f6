package ratings

import (
	"strings"
	"testing"
)

// The parsers of a ratings table's settings take input from elsewhere:
// whatever they get, they return a result or an error, never panic
// (.ci/fuzz.sh runs each target for a few seconds).

func FuzzParseColumn(f *testing.F) {
	for _, s := range []string{"userId", "2", " 3 ", "0", "-1", "", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseColumn(s)
		if err != nil {
			return
		}
		if (c.Name == "") == (c.Pos == 0) || c.Pos < 0 {
			t.Fatalf("ParseColumn(%q) = %+v: want a name or a position >= 1", s, c)
		}
		if c.Name != "" && c.Name != strings.TrimSpace(c.Name) {
			t.Fatalf("ParseColumn(%q): name %q not trimmed", s, c.Name)
		}
	})
}

func FuzzParseDelimiter(f *testing.F) {
	for _, s := range []string{"tab", `\t`, ",", "::", "", "\"", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDelimiter(s)
		if err != nil {
			return
		}
		if d == "" || strings.ContainsAny(d, "\"\r\n") {
			t.Fatalf("parseDelimiter(%q) = %q", s, d)
		}
	})
}
