package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"

	"goldstone/internal/atomicfile"
)

// Kind says what the segments of a store are.
type Kind string

const (
	KindText  Kind = "text"  // whole documents, weight 1
	KindNgram Kind = "ngram" // (n-gram, year) records, weight match_count
)

// Segment is one stored token sequence (see the package doc).
type Segment struct {
	Time   int32    `parquet:"time"`
	Doc    int32    `parquet:"doc"`
	Weight int64    `parquet:"weight"`
	Tokens []string `parquet:"tokens,dict"`
}

// Parquet key-value metadata keys.
const (
	MetaKind      = "goldstone.corpus.kind"
	MetaVocabSize = "goldstone.corpus.vocab_size"
	MetaSteps     = "goldstone.corpus.steps"
	MetaWindow    = "goldstone.corpus.window"
	MetaScheme    = "goldstone.corpus.scheme"
)

// writeParquet writes rows produced by fill (which calls put once per row) to path, zstd
// compressed, atomically.
func writeParquet[T any](path string, meta map[string]string, fill func(put func(T) error) error) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Zstd)}
	for k, v := range meta {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	buf := make([]T, 0, 1024)
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := w.Write(buf)
		clear(buf)
		buf = buf[:0]
		return err
	}
	err = fill(func(row T) error {
		buf = append(buf, row)
		if len(buf) == cap(buf) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// scanParquet streams the rows of path to fn (the row is reused between calls) and returns
// the file's key-value metadata lookup.
func scanParquet[T any](ctx context.Context, path string, fn func(*T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	buf := make([]T, 1024)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		for i := range buf[:n] {
			if e := fn(&buf[i]); e != nil {
				return e
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// lookupMeta returns the key-value metadata of a parquet file.
func lookupMeta(path string, keys ...string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v, ok := pf.Lookup(k)
		if !ok {
			return nil, fmt.Errorf("open %s: no metadata %s", path, k)
		}
		out[k] = v
	}
	return out, nil
}

func metaInt(m map[string]string, key string) (int, error) {
	v, err := strconv.Atoi(m[key])
	if err != nil {
		return 0, fmt.Errorf("metadata %s: %w", key, err)
	}
	return v, nil
}

// SegmentKind returns the kind of the segment store at path.
func SegmentKind(path string) (Kind, error) {
	m, err := lookupMeta(path, MetaKind)
	if err != nil {
		return "", err
	}
	k := Kind(m[MetaKind])
	if k != KindText && k != KindNgram {
		return "", fmt.Errorf("open %s: unknown kind %q", path, k)
	}
	return k, nil
}

// ScanSegments streams the segments of the store at path to fn. The segment and its Tokens
// slice are reused between calls.
func ScanSegments(ctx context.Context, path string, fn func(*Segment) error) error {
	return scanParquet(ctx, path, fn)
}

// IngestStats summarises an ingest.
type IngestStats struct {
	Segments int64 // rows written
	Tokens   int64 // tokens written (not weighted)
	Skipped  int64 // documents left without tokens (n-gram records are skipped silently)
}

func toTime(t int) (int32, error) {
	if t < math.MinInt32 || t > math.MaxInt32 {
		return 0, fmt.Errorf("time %d out of int32 range", t)
	}
	return int32(t), nil
}

// ingestDocs writes the documents produced by scan to a text store.
func ingestDocs(dst string, tk Tokenizer, scan func(fn func(Document) error) error) (IngestStats, error) {
	var st IngestStats
	err := writeParquet(dst, map[string]string{MetaKind: string(KindText)}, func(put func(Segment) error) error {
		doc := int32(0)
		return scan(func(d Document) error {
			t, err := toTime(d.Time)
			if err != nil {
				return fmt.Errorf("%s: %w", d.Name, err)
			}
			toks := tk.Append(nil, d.Text)
			if len(toks) == 0 {
				st.Skipped++
				return nil
			}
			st.Segments++
			st.Tokens += int64(len(toks))
			err = put(Segment{Time: t, Doc: doc, Weight: 1, Tokens: toks})
			doc++
			return err
		})
	})
	return st, err
}

// IngestDir tokenises the dated files of dir (see ScanDir) into a text store at dst, one
// segment per document, doc numbering the kept documents in file-name order.
func IngestDir(ctx context.Context, dir, dst string, tk Tokenizer) (IngestStats, error) {
	return ingestDocs(dst, tk, func(fn func(Document) error) error { return ScanDir(ctx, dir, fn) })
}

// IngestCSV tokenises the rows of the dated CSV file src (see ScanCSV) into a text store.
func IngestCSV(ctx context.Context, src, dst string, tk Tokenizer) (IngestStats, error) {
	return IngestCSVFields(ctx, src, dst, DocFields{}, tk, ReadLimits{})
}

// IngestNgrams parses the n-gram files srcs (plain or gzip, v2 or v3) into an n-gram store
// at dst: one segment per kept (n-gram, year) record with weight match_count and doc the
// index of its file in srcs. Use CountingNgramOptions for co-occurrence counting. Each
// file is decompressed within lim.
func IngestNgrams(ctx context.Context, srcs []string, dst string, opt NgramOptions, lim ReadLimits) (IngestStats, error) {
	var st IngestStats
	if len(srcs) == 0 {
		return st, errors.New("ingest n-grams: no input files")
	}
	err := writeParquet(dst, map[string]string{MetaKind: string(KindNgram)}, func(put func(Segment) error) error {
		for k, src := range srcs {
			err := scanNgramFile(ctx, src, opt, lim, func(g *Ngram) error {
				t, err := toTime(g.Year)
				if err != nil {
					return err
				}
				st.Segments++
				st.Tokens += int64(len(g.Tokens))
				return put(Segment{Time: t, Doc: int32(k), Weight: g.Match, Tokens: append([]string(nil), g.Tokens...)})
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}
