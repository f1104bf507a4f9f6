package corpus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"goldstone/internal/compressed"
	"goldstone/internal/safetext"
)

// NgramFormat is the line layout of a Google Books Ngram file.
type NgramFormat int

const (
	// FormatAuto decides per line: v3 if the second field contains a comma, else v2.
	FormatAuto NgramFormat = iota
	// FormatV2 is version 20120701: ngram TAB year TAB match_count TAB volume_count.
	FormatV2
	// FormatV3 is version 20200217: ngram TAB year,match,volumes TAB year,match,volumes ...
	FormatV3
)

// NgramOptions configures NgramScanner. The zero value parses either format, strips
// part-of-speech suffixes and drops tag tokens.
type NgramOptions struct {
	Format NgramFormat
	// KeepSuffixes keeps part-of-speech suffixes ("burnt_VERB") instead of stripping them.
	KeepSuffixes bool
	// KeepTagTokens keeps tag tokens ("_NOUN_", "_START_", "_END_", "_ROOT_") instead of
	// dropping them.
	KeepTagTokens bool
	// SkipTagged skips every record holding a suffixed token or a part-of-speech tag token
	// (markers _START_, _END_ and _ROOT_ do not count): such records break down untagged
	// records by part of speech, so keeping them counts the same text twice.
	SkipTagged bool
	// Lower lower-cases tokens (Unicode).
	Lower bool
}

// CountingNgramOptions are the options to parse n-grams for co-occurrence counting: tagged
// breakdowns are skipped and sentence markers keep their positions.
var CountingNgramOptions = NgramOptions{SkipTagged: true, KeepTagTokens: true}

// Ngram is one (n-gram, year) record.
type Ngram struct {
	Tokens  []string
	Year    int
	Match   int64 // match_count: occurrences in the year
	Volumes int64 // volume_count: books containing it in the year
}

// Field names used in parse errors.
const (
	FieldNgram   = "ngram"
	FieldYear    = "year"
	FieldMatch   = "match_count"
	FieldVolumes = "volume_count"
	FieldPages   = "page_count"
)

// ParseError is a malformed line. Its message is "file:line: field X: reason".
type ParseError struct {
	File  string
	Line  int
	Field string // "" when the line's shape is wrong
	Err   error
}

func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: field %s: %v", e.File, e.Line, e.Field, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

var posTags = map[string]bool{
	"NOUN": true, "VERB": true, "ADJ": true, "ADV": true, "PRON": true, "DET": true,
	"ADP": true, "NUM": true, "CONJ": true, "PRT": true, "X": true, ".": true,
}

var markerTags = map[string]bool{"START": true, "END": true, "ROOT": true}

// IsTagToken reports whether tok is a pure tag token: "_TAG_" with TAG a part-of-speech tag
// (NOUN, VERB, ADJ, ADV, PRON, DET, ADP, NUM, CONJ, PRT, X, .) or a marker (START, END, ROOT).
func IsTagToken(tok string) bool {
	if len(tok) < 3 || tok[0] != '_' || tok[len(tok)-1] != '_' {
		return false
	}
	t := tok[1 : len(tok)-1]
	return posTags[t] || markerTags[t]
}

// SplitTag splits a part-of-speech suffix off tok: "burnt_VERB" -> ("burnt", "VERB", true).
// A tag token or a token without a known suffix returns (tok, "", false).
func SplitTag(tok string) (word, tag string, ok bool) {
	i := strings.LastIndexByte(tok, '_')
	if i < 0 || !posTags[tok[i+1:]] {
		return tok, "", false
	}
	return tok[:i], tok[i+1:], true
}

// normalize applies opt to the tokens in place and returns the kept tokens; skip reports a
// record that SkipTagged rejects.
func (opt *NgramOptions) normalize(toks []string) (kept []string, skip bool) {
	kept = toks[:0]
	for _, tok := range toks {
		if IsTagToken(tok) {
			if opt.SkipTagged && posTags[tok[1:len(tok)-1]] {
				return nil, true
			}
			if opt.KeepTagTokens {
				kept = append(kept, tok)
			}
			continue
		}
		if word, _, ok := SplitTag(tok); ok {
			if opt.SkipTagged {
				return nil, true
			}
			if !opt.KeepSuffixes {
				tok = word
			}
		}
		if tok == "" {
			continue
		}
		if opt.Lower {
			tok = strings.ToLower(tok)
		}
		kept = append(kept, tok)
	}
	return kept, false
}

type yearCounts struct {
	year           int
	match, volumes int64
}

// NgramScanner reads Ngram records from a v2 or v3 file, one (n-gram, year) record per
// Scan, like bufio.Scanner. Blank lines are skipped, and so are records left without tokens
// or rejected by SkipTagged. Lines may be of any length.
type NgramScanner struct {
	r    *bufio.Reader
	name string
	opt  NgramOptions
	line int
	buf  []byte
	toks []string
	yc   []yearCounts
	next int // index into yc of the next record to emit
	rec  Ngram
	err  error
}

// NewNgramScanner returns a scanner over r (already decompressed; see Decompress); name is
// used in errors.
func NewNgramScanner(r io.Reader, name string, opt NgramOptions) *NgramScanner {
	return &NgramScanner{r: bufio.NewReaderSize(r, 1<<16), name: name, opt: opt}
}

// Scan advances to the next record, returning false at the end or on an error.
func (s *NgramScanner) Scan() bool {
	for s.err == nil {
		if s.next < len(s.yc) {
			y := s.yc[s.next]
			s.next++
			s.rec = Ngram{Tokens: s.toks, Year: y.year, Match: y.match, Volumes: y.volumes}
			return true
		}
		line, err := s.readLine()
		if err != nil {
			if err != io.EOF {
				s.err = fmt.Errorf("read %s:%d: %w", s.name, s.line+1, limitHint(err))
			}
			return false
		}
		s.line++
		if err := s.parseLine(line); err != nil {
			s.err = err
			return false
		}
	}
	return false
}

// Ngram returns the current record. It and its Tokens slice are valid until the next Scan;
// the token strings themselves may be kept.
func (s *NgramScanner) Ngram() *Ngram { return &s.rec }

// Line returns the 1-based number of the line of the current record.
func (s *NgramScanner) Line() int { return s.line }

// Err returns the first error met, nil at a clean end of input. Parse errors are *ParseError.
func (s *NgramScanner) Err() error { return s.err }

// readLine returns the next line without its '\n' (and the '\r's before it: "\r\n", or
// "\r\r\n" from a CRLF file converted twice), io.EOF at the end.
func (s *NgramScanner) readLine() ([]byte, error) {
	s.buf = s.buf[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		s.buf = append(s.buf, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(s.buf) > 0 {
			err = nil
		}
		if err != nil {
			return nil, err
		}
		b := bytes.TrimSuffix(s.buf, []byte{'\n'})
		return bytes.TrimRight(b, "\r"), nil
	}
}

func (s *NgramScanner) fail(field string, err error) error {
	return &ParseError{File: s.name, Line: s.line, Field: field, Err: err}
}

var (
	errFields   = errors.New("want ngram TAB year TAB match_count TAB volume_count (v2) or ngram TAB year,match,volumes ... (v3)")
	errEmpty    = errors.New("empty")
	errNegative = errors.New("negative")
)

func (s *NgramScanner) parseLine(line []byte) error {
	s.yc, s.next = s.yc[:0], 0
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	gram, rest, ok := bytes.Cut(line, []byte{'\t'})
	if !ok {
		return s.fail("", errFields)
	}
	format := s.opt.Format
	if format == FormatAuto {
		format = FormatV2
		if first, _, _ := bytes.Cut(rest, []byte{'\t'}); bytes.IndexByte(first, ',') >= 0 {
			format = FormatV3
		}
	}
	switch format {
	case FormatV2:
		year, rest, ok1 := bytes.Cut(rest, []byte{'\t'})
		match, vol, ok2 := bytes.Cut(rest, []byte{'\t'})
		if !ok1 || !ok2 || bytes.IndexByte(vol, '\t') >= 0 {
			return s.fail("", errFields)
		}
		y, err := s.counts(year, match, vol)
		if err != nil {
			return err
		}
		s.yc = append(s.yc, y)
	case FormatV3:
		for k := 0; len(rest) > 0 || k == 0; k++ {
			var field []byte
			field, rest, _ = bytes.Cut(rest, []byte{'\t'})
			year, field, ok1 := bytes.Cut(field, []byte{','})
			match, vol, ok2 := bytes.Cut(field, []byte{','})
			if !ok1 || !ok2 || bytes.IndexByte(vol, ',') >= 0 {
				return s.fail(fmt.Sprintf("counts[%d]", k), errors.New("want year,match_count,volume_count"))
			}
			y, err := s.counts(year, match, vol)
			if err != nil {
				var pe *ParseError
				if errors.As(err, &pe) {
					pe.Field = fmt.Sprintf("counts[%d].%s", k, pe.Field)
				}
				return err
			}
			s.yc = append(s.yc, y)
		}
	default:
		panic(fmt.Sprintf("corpus: unknown NgramFormat %d", int(format)))
	}
	s.toks = s.toks[:0]
	for tok := range bytes.SplitSeq(gram, []byte{' '}) {
		if len(tok) > 0 {
			s.toks = append(s.toks, string(tok))
		}
	}
	if len(s.toks) == 0 {
		return s.fail(FieldNgram, errEmpty)
	}
	var skip bool
	s.toks, skip = s.opt.normalize(s.toks)
	if skip || len(s.toks) == 0 {
		s.yc = s.yc[:0]
	}
	return nil
}

func (s *NgramScanner) counts(year, match, vol []byte) (yearCounts, error) {
	y, err := parseInt(year, 32)
	if err != nil {
		return yearCounts{}, s.fail(FieldYear, err)
	}
	m, err := parseInt(match, 64)
	if err != nil {
		return yearCounts{}, s.fail(FieldMatch, err)
	}
	v, err := parseInt(vol, 64)
	if err != nil {
		return yearCounts{}, s.fail(FieldVolumes, err)
	}
	if m < 0 {
		return yearCounts{}, s.fail(FieldMatch, errNegative)
	}
	if v < 0 {
		return yearCounts{}, s.fail(FieldVolumes, errNegative)
	}
	return yearCounts{year: int(y), match: m, volumes: v}, nil
}

// parseInt parses a decimal integer that fits in bits bits, without allocating.
func parseInt(b []byte, bits uint) (int64, error) {
	if len(b) == 0 {
		return 0, errEmpty
	}
	neg := b[0] == '-'
	if neg || b[0] == '+' {
		b = b[1:]
		if len(b) == 0 {
			return 0, fmt.Errorf("%q is not an integer", "-")
		}
	}
	limit := uint64(1)<<(bits-1) - 1
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s is not an integer", safetext.Quote(b))
		}
		n = n*10 + uint64(c-'0')
		if n > limit+1 {
			return 0, fmt.Errorf("%s out of range", safetext.Quote(b))
		}
	}
	if n > limit && !(neg && n == limit+1) {
		return 0, fmt.Errorf("%s out of range", safetext.Quote(b))
	}
	if neg {
		return -int64(n), nil
	}
	return int64(n), nil
}

// Decompress returns the content of r: gunzipped or zstd-decoded when it starts with their
// magic bytes (internal/compressed), else r itself. Close releases the decoder. What a
// compressed r decompresses to is bounded by the default limit (compressed.NewReader).
func Decompress(r io.Reader) (io.ReadCloser, error) {
	rc, _, err := compressed.NewReader(r)
	return rc, err
}

// ReadLimits bound what the corpus readers take from one input file. The zero value
// means the defaults.
type ReadLimits struct {
	// Bytes is the most a gzip or zstd file may decompress to (the setting
	// max_input_bytes); 0: compressed.DefaultLimit of its size (100 times, at least 64 MiB).
	Bytes int64
}

// openText opens the file at path and its content, decompressed within lim. Close closes
// both.
func openText(path string, lim ReadLimits) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	dr, _, err := compressed.NewReaderLimit(f, lim.Bytes)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &fileText{ReadCloser: dr, f: f}, nil
}

type fileText struct {
	io.ReadCloser
	f *os.File
}

func (t *fileText) Close() error {
	err := t.ReadCloser.Close()
	if ferr := t.f.Close(); err == nil {
		err = ferr
	}
	return err
}

// limitHint names the setting that raises the limit a *compressed.LimitError hit.
func limitHint(err error) error {
	if errors.Is(err, compressed.ErrTooLarge) {
		return fmt.Errorf("%w: raise max_input_bytes if the file is real data", err)
	}
	return err
}

// readError is a read error of file name, with limitHint.
func readError(name string, err error) error { return fmt.Errorf("read %s: %w", name, limitHint(err)) }

// ScanNgrams streams the records of r (plain, gzip or zstd) to fn, stopping at the first error
// from the parser, from fn or from ctx. The record passed to fn is valid during the call.
func ScanNgrams(ctx context.Context, r io.Reader, name string, opt NgramOptions, fn func(*Ngram) error) error {
	dr, err := Decompress(r)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer dr.Close()
	return scanNgramText(ctx, dr, name, opt, fn)
}

// scanNgramText is ScanNgrams on decompressed text.
func scanNgramText(ctx context.Context, text io.Reader, name string, opt NgramOptions, fn func(*Ngram) error) error {
	s := NewNgramScanner(text, name, opt)
	for n := 0; s.Scan(); n++ {
		if n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(s.Ngram()); err != nil {
			return err
		}
	}
	return s.Err()
}

// ScanNgramFile is ScanNgrams on the file at path, decompressed within the default limits.
func ScanNgramFile(ctx context.Context, path string, opt NgramOptions, fn func(*Ngram) error) error {
	return scanNgramFile(ctx, path, opt, ReadLimits{}, fn)
}

func scanNgramFile(ctx context.Context, path string, opt NgramOptions, lim ReadLimits, fn func(*Ngram) error) error {
	text, err := openText(path, lim)
	if err != nil {
		return err
	}
	defer text.Close()
	return scanNgramText(ctx, text, path, opt, fn)
}
