// Package safetext shows text that came from elsewhere (a data file, a
// corpus, a setting or a note someone else wrote) without letting it act:
// Quote and Cut bound what an error echoes of its input to a readable
// length, saying how long the input was; Escape writes the characters a
// terminal or a browser acts on (ESC and the other control characters,
// the bidirectional overrides) as Go escapes, so that they show as text.
//
// Invariant: the output of Escape holds no control character but '\n' and
// '\t', no bidirectional control and no invalid UTF-8; the output of Quote
// and Cut is at most MaxEcho bytes of the input plus a fixed tail.
package safetext

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxEcho is how many bytes of its input an error echoes at most.
const MaxEcho = 200

// cut returns s cut to at most MaxEcho bytes at a rune boundary, and
// whether it was cut.
func cut[T ~string | ~[]byte](s T) (string, bool) {
	if len(s) <= MaxEcho {
		return string(s), false
	}
	n := MaxEcho
	for n > MaxEcho-utf8.UTFMax && n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return string(s[:n]), true
}

// Quote returns s as a Go string literal (strconv.Quote) for an error
// message; input longer than MaxEcho bytes is cut, and the literal is
// followed by "... (N bytes)": a 10 MB header line echoes as
// "userId,movie..."... (10485760 bytes).
func Quote[T ~string | ~[]byte](s T) string {
	c, cutOff := cut(s)
	q := strconv.Quote(c)
	if cutOff {
		q += fmt.Sprintf("... (%d bytes)", len(s))
	}
	return q
}

// Cut returns s, cut as Quote cuts it, without quoting: for lists a
// message builds of the input's parts (a header's column names). The cut
// text is escaped (Escape) so that a cut never splits an escape sequence
// into a half that acts.
func Cut(s string) string {
	c, cutOff := cut(s)
	if !cutOff {
		return s
	}
	return Escape(c) + fmt.Sprintf("... (%d bytes)", len(s))
}

// NumError returns err with the input a strconv.NumError echoes cut as
// Quote cuts it ("strconv.ParseFloat: parsing "123..."... (N bytes):
// invalid syntax"); any other error, and a short input, unchanged.
func NumError(err error) error {
	var ne *strconv.NumError
	if !errors.As(err, &ne) || len(ne.Num) <= MaxEcho {
		return err
	}
	return &cutNumError{ne}
}

type cutNumError struct{ *strconv.NumError }

func (e *cutNumError) Error() string {
	return "strconv." + e.Func + ": parsing " + Quote(e.Num) + ": " + e.Err.Error()
}

func (e *cutNumError) Unwrap() error { return e.NumError }

// Escape returns s with every character that a terminal or a browser
// would act on rather than show written as a Go escape: C0 control
// characters but '\n' and '\t' (ESC as \x1b, CR as \r), DEL, C1 controls,
// the bidirectional controls (\u202e) and each byte of invalid UTF-8
// (\xff). Text without them is returned as it is.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for s = s[i:]; len(s) > 0; {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unsafe(r):
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\r', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// EscapeBytes is Escape of a byte slice; b itself when it needs none.
func EscapeBytes(b []byte) []byte {
	if firstUnsafe(b) < 0 {
		return b
	}
	return []byte(Escape(string(b)))
}

// firstUnsafe returns the index of the first rune or invalid byte of s that
// Escape escapes, -1 if none.
func firstUnsafe[T ~string | ~[]byte](s T) int {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if (r == utf8.RuneError && size == 1) || unsafe(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafe reports a rune that Escape writes as an escape. utf8.RuneError
// itself (U+FFFD written as such) is shown as it is; the invalid bytes
// that decode to it are escaped by Escape.
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	}
	return r > 0x7f && unicode.Is(unicode.Bidi_Control, r)
}
