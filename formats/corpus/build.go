package corpus

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
)

type stepRow struct {
	T  int32 `parquet:"t"`
	Lo int32 `parquet:"lo"`
	Hi int32 `parquet:"hi"`
	// First and last year with data in the bin.
	First int32   `parquet:"first"`
	Last  int32   `parquet:"last"`
	Tau   float64 `parquet:"tau"`
	N     int64   `parquet:"tokens"`
	Role  string  `parquet:"role"`
}

// WriteSteps writes the time steps to Parquet, rows (t, lo, hi, first, last, tau, tokens, role) with
// role "train", "valid" or "test".
func WriteSteps(path string, b *Bins, sp Split) error {
	return writeParquet(path, map[string]string{MetaSteps: strconv.Itoa(b.Len())}, func(put func(stepRow) error) error {
		for t := range b.Len() {
			r := stepRow{T: int32(t), Lo: int32(b.Lo[t]), Hi: int32(b.Hi[t]), First: int32(b.First[t]), Last: int32(b.Last[t]), Tau: b.Tau[t], N: b.Tokens[t], Role: sp.Role(t).String()}
			if err := put(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadSteps reads the time steps written by WriteSteps.
func ReadSteps(ctx context.Context, path string) (*Bins, Split, error) {
	b := &Bins{}
	var sp Split
	err := scanParquet(ctx, path, func(r *stepRow) error {
		t := len(b.Lo)
		if int(r.T) != t {
			return fmt.Errorf("read %s: row %d has step %d", path, t, r.T)
		}
		b.Lo, b.Hi = append(b.Lo, int(r.Lo)), append(b.Hi, int(r.Hi))
		b.First, b.Last = append(b.First, int(r.First)), append(b.Last, int(r.Last))
		b.Tau, b.Tokens = append(b.Tau, r.Tau), append(b.Tokens, r.N)
		switch r.Role {
		case "train":
			sp.Train = append(sp.Train, t)
		case "valid":
			sp.Valid = append(sp.Valid, t)
		case "test":
			sp.Test = append(sp.Test, t)
		default:
			return fmt.Errorf("read %s: step %d: unknown role %q", path, t, r.Role)
		}
		return nil
	})
	if err != nil {
		return nil, Split{}, err
	}
	return b, sp, nil
}

// BuildConfig configures Build.
type BuildConfig struct {
	Segments string // segment store (IngestDir, IngestCSV or IngestNgrams)
	OutDir   string // receives vocab.parquet, steps.parquet, counts.parquet, marginals.parquet
	Bins     BinOptions
	Vocab    VocabOptions
	Split    SplitOptions
	Count    CountOptions
	// StepsPerPass > 0 bounds memory: counts are held for at most that many steps at a time,
	// at the price of one pass over the segments per group of steps (0: one pass).
	StepsPerPass int
	// FromYear and ToYear, when non-zero, keep only the years in [FromYear, ToYear].
	FromYear, ToYear int
}

// Output file names of Build inside OutDir.
const (
	VocabFile     = "vocab.parquet"
	StepsFile     = "steps.parquet"
	CountsFile    = "counts.parquet"
	MarginalsFile = "marginals.parquet"
)

// BuildResult summarises a Build.
type BuildResult struct {
	Bins  *Bins
	Split Split
	Vocab *Vocab
	Pairs int64 // stored non-zero (t, i, j) counts
}

// Build bins the years of a segment store, builds the vocabulary, splits the steps, counts
// and writes the four output files. It makes three passes over the store, plus one
// per further group of StepsPerPass steps.
func Build(ctx context.Context, cfg BuildConfig) (*BuildResult, error) {
	years, err := YearTotals(ctx, cfg.Segments)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	for y := range years {
		if (cfg.FromYear != 0 && y < cfg.FromYear) || (cfg.ToYear != 0 && y > cfg.ToYear) {
			delete(years, y)
		}
	}
	bins, err := MakeBins(years, cfg.Bins)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	uni, err := StepUnigrams(ctx, cfg.Segments, bins)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	vocab, err := BuildVocab(uni, cfg.Vocab)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	uni = nil
	sp, err := SplitSteps(bins.Len(), cfg.Split)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	out := func(name string) string { return filepath.Join(cfg.OutDir, name) }
	if err := WriteVocab(out(VocabFile), vocab); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	if err := WriteSteps(out(StepsFile), bins, sp); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	pairs, err := CountToFiles(ctx, cfg.Segments, bins, vocab, cfg.Count, cfg.StepsPerPass, out(CountsFile), out(MarginalsFile))
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	return &BuildResult{Bins: bins, Split: sp, Vocab: vocab, Pairs: pairs}, nil
}
