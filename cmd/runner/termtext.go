package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/term"
)

// termText escapes the characters of s that a terminal acts on instead of
// showing them: C0 and C1 control characters (ESC starts the sequences
// that move the cursor, recolour or retitle), DEL, the bidirectional
// overrides that reorder what is shown, and invalid UTF-8. They are
// written as Go escapes (\x1b, \t, \u202e), so that a note, tag, name or
// error recorded by someone else shows as text.
func termText(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e', '\ufffd' for invalid UTF-8
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == unicode.ReplacementChar || unicode.Is(unicode.Bidi_Control, r)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// csvText is termText for a CSV field written to a terminal; to a file or
// a pipe the field is written as recorded.
func csvText(w io.Writer) func(string) string {
	if isTerminal(w) {
		return termText
	}
	return func(s string) string { return s }
}
