package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"goldstone/formats"
)

// Format is a registered corpus format (the corpus_format setting): how the start of a
// corpus is checked before a run and how the corpus is ingested into segments.
type Format struct {
	// Fields: the format reads Options.Fields (the time and text fields of a document).
	Fields bool
	// Check reads the start of the corpus at path as Ingest would (a wrong header or
	// field stops before anything runs).
	Check func(ctx context.Context, path string, o Options) error
	// Ingest parses the corpus at src into a segments table at dst.
	Ingest func(ctx context.Context, src, dst string, o Options) (IngestStats, error)
}

// Options are what a format reads besides its paths.
type Options struct {
	Fields    DocFields  // csv and jsonl: the fields of a document's time and text
	Limits    ReadLimits // bounds on what compressed inputs decompress to
	Tokenizer Tokenizer
}

// Formats is the registry of corpus formats, in the order the docs list them. A new
// format is a reader in this package and one Register line here.
var Formats = formats.NewRegistry[Format]("corpus_format")

func init() {
	Formats.Register("text", Format{
		Check: func(_ context.Context, path string, _ Options) error { return CheckDir(path) },
		Ingest: func(ctx context.Context, src, dst string, o Options) (IngestStats, error) {
			return IngestDir(ctx, src, dst, o.Tokenizer)
		},
	})
	Formats.Register("csv", Format{Fields: true,
		Check: func(ctx context.Context, path string, o Options) error { return CheckCSV(ctx, path, o.Fields) },
		Ingest: func(ctx context.Context, src, dst string, o Options) (IngestStats, error) {
			return IngestCSVFields(ctx, src, dst, o.Fields, o.Tokenizer, o.Limits)
		},
	})
	Formats.Register("jsonl", Format{Fields: true,
		Check: func(ctx context.Context, path string, o Options) error { return CheckJSONL(ctx, path, o.Fields) },
		Ingest: func(ctx context.Context, src, dst string, o Options) (IngestStats, error) {
			return IngestJSONL(ctx, src, dst, o.Fields, o.Tokenizer, o.Limits)
		},
	})
	Formats.Register("ngram-v2", ngramFormat(FormatV2))
	Formats.Register("ngram-v3", ngramFormat(FormatV3))
}

// ngramFormat is the Google Books n-gram format of version v: a file or a folder of
// n-gram files, parsed with the options for counting (lower case).
func ngramFormat(v NgramFormat) Format {
	opt := CountingNgramOptions
	opt.Format = v
	opt.Lower = true
	return Format{
		Check: func(ctx context.Context, path string, _ Options) error {
			files, err := NgramFiles(path)
			if err != nil {
				return err
			}
			return CheckNgrams(ctx, files, opt)
		},
		Ingest: func(ctx context.Context, src, dst string, o Options) (IngestStats, error) {
			files, err := NgramFiles(src)
			if err != nil {
				return IngestStats{}, err
			}
			return IngestNgrams(ctx, files, dst, opt, o.Limits)
		},
	}
}

// NgramFiles returns the n-gram files at path: path itself, or the regular files of the
// folder path (not hidden, not a totalcounts file).
func NgramFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && !strings.Contains(e.Name(), "totalcounts") {
			out = append(out, filepath.Join(path, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no n-gram files", path)
	}
	return out, nil
}
