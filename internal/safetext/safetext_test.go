package safetext

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuoteAndCut(t *testing.T) {
	long := strings.Repeat("userId,", 1<<20/7+1) // a 1 MiB header line
	for _, tc := range []struct{ in, quote, cut string }{
		{"four", `"four"`, "four"},
		{"a\x1bb", `"a\x1bb"`, "a\x1bb"},
		{strings.Repeat("x", MaxEcho), strconv.Quote(strings.Repeat("x", MaxEcho)), strings.Repeat("x", MaxEcho)},
		{strings.Repeat("x", MaxEcho+1), `"` + strings.Repeat("x", MaxEcho) + `"... (201 bytes)`, strings.Repeat("x", MaxEcho) + "... (201 bytes)"},
		// A rune across the cut is left out whole.
		{strings.Repeat("x", MaxEcho-1) + "é" + "y", `"` + strings.Repeat("x", MaxEcho-1) + `"... (202 bytes)`, strings.Repeat("x", MaxEcho-1) + "... (202 bytes)"},
		// Cut escapes what it cuts, so no escape sequence is split into a part that acts.
		{strings.Repeat("x", MaxEcho-2) + "\x1b[31m", `"` + strings.Repeat("x", MaxEcho-2) + `\x1b["... (203 bytes)`, strings.Repeat("x", MaxEcho-2) + `\x1b[... (203 bytes)`},
	} {
		if got := Quote(tc.in); got != tc.quote {
			t.Errorf("Quote(%.30q...) = %q, want %q", tc.in, got, tc.quote)
		}
		if got := Quote([]byte(tc.in)); got != tc.quote {
			t.Errorf("Quote([]byte(%.30q...)) = %q, want %q", tc.in, got, tc.quote)
		}
		if got := Cut(tc.in); got != tc.cut {
			t.Errorf("Cut(%.30q...) = %q, want %q", tc.in, got, tc.cut)
		}
	}
	if got := Quote(long); len(got) > MaxEcho+40 || !strings.HasSuffix(got, "... (1048579 bytes)") {
		t.Errorf("Quote of a 1 MiB line: %d bytes: %.60q...", len(got), got)
	}
}

func TestNumError(t *testing.T) {
	_, short := strconv.ParseFloat("four", 32)
	if got := NumError(short); got != short {
		t.Errorf("NumError(%v) = %v, want it unchanged", short, got)
	}
	_, long := strconv.ParseFloat(strings.Repeat("9", 1<<20)+"x", 64)
	got := NumError(long)
	if len(got.Error()) > MaxEcho+80 || !strings.Contains(got.Error(), "... (1048577 bytes): invalid syntax") || !strings.HasPrefix(got.Error(), "strconv.ParseFloat: parsing \"999") {
		t.Errorf("NumError of a 1 MiB number: %.300s", got)
	}
	if !errors.Is(got, strconv.ErrSyntax) {
		t.Errorf("NumError(...) does not wrap strconv.ErrSyntax")
	}
	other := errors.New("other")
	if NumError(other) != other {
		t.Errorf("NumError changed an error that is no *strconv.NumError")
	}
}

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"line one\n\tline two", "line one\n\tline two"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"\x1b]0;title\x07", `\x1b]0;title\a`},
		{"cr\rdel\x7fnul\x00", `cr\rdel\x7fnul\x00`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"bidi \u202eevil\u202c", `bidi \u202eevil\u202c`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{"\ufffd stays", "\ufffd stays"},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(EscapeBytes([]byte(tc.in))); got != tc.want {
			t.Errorf("EscapeBytes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The invariants hold for any input: Escape leaves no control character but
// '\n' and '\t', no bidirectional control and valid UTF-8, and escaping
// again changes nothing; Quote and Cut stay short.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2Jb", "\xff\u202e\n\t\r", strings.Repeat("é", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q: invalid UTF-8", s, e)
		}
		if i := firstUnsafe(e); i >= 0 {
			t.Fatalf("Escape(%q) = %q: unsafe at %d", s, e, i)
		}
		if Escape(e) != e {
			t.Fatalf("Escape is not idempotent on %q", s)
		}
		if q := Quote(s); len(q) > 4*MaxEcho+40 {
			t.Fatalf("Quote(%d bytes) is %d bytes", len(s), len(q))
		}
		if c := Cut(s); len(s) > MaxEcho && len(c) > 4*MaxEcho+40 {
			t.Fatalf("Cut(%d bytes) is %d bytes", len(s), len(c))
		}
	})
}
