package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"goldstone/pipeline"
	"goldstone/runs"
	"goldstone/sweep"
	"goldstone/workdir"
)

var verifyFlags struct {
	evict  bool
	series bool
}

func init() {
	commands = append(commands, &command{
		name:    "verify",
		summary: "check every cache entry of --workdir against its recorded content digests",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&verifyFlags.evict, "evict", false, "remove the entries that fail (the next run recomputes them)")
			fs.BoolVar(&verifyFlags.series, "series", true, "also check every series point the results database (--db) recorded against the series file of the trial in the cache; --series=false checks the cache alone")
		},
		run: runVerify,
	})
}

// runVerify prints one line per entry that fails and a summary line. Exit
// 1 when some entry failed (evicted or not), 2 when --workdir is not there.
// --evict runs beside runners: an entry a runner holds is left to it.
func runVerify(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	reps, err := pipeline.Verify(ctx, g.workdir, pipeline.VerifyOptions{Evict: verifyFlags.evict})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, pipeline.ErrBusy) {
			return &exitError{exitUsage, err}
		}
		return err
	}
	var bytes int64
	bad, evicted := 0, 0
	for _, r := range reps {
		bytes += r.Bytes
		if r.OK {
			continue
		}
		bad++
		state := "corrupt"
		if r.Evicted {
			state = "evicted"
			evicted++
		} else if r.InUse {
			state = "corrupt (kept: a running runner is replacing it)"
		}
		node := r.Node
		if node == "" {
			node = "?"
		}
		fmt.Fprintf(g.stdout, "%s %s/%s (node %s): %s\n", state, r.Stage, r.Key, node, r.Problem)
	}
	fmt.Fprintf(g.stdout, "%s: %d entries (%.1f MB): %d ok, %d corrupt", g.workdir, len(reps), float64(bytes)/1e6, len(reps)-bad, bad)
	if verifyFlags.evict {
		fmt.Fprintf(g.stdout, ", %d evicted", evicted)
	}
	fmt.Fprintln(g.stdout)
	var sc *seriesVerification
	if verifyFlags.series {
		if sc, err = verifySeries(ctx, g); err != nil {
			return err
		}
		for _, l := range sc.lines {
			fmt.Fprintf(g.stdout, "series differ: %s\n", l)
		}
		if sc.note != "" {
			fmt.Fprintf(g.stdout, "%s: %s\n", g.db, sc.note)
		} else {
			fmt.Fprintf(g.stdout, "%s: %d series files of %d runs checked against the recorded points: %d differ\n", g.db, sc.files, sc.runs, sc.bad)
		}
	}
	switch {
	case bad > 0:
		return &exitError{exitFailed, fmt.Errorf("%d of %d cache entries failed verification", bad, len(reps))}
	case sc != nil && sc.bad > 0:
		return &exitError{exitFailed, fmt.Errorf("%d of %d series files differ from what %s recorded", sc.bad, sc.files, g.db)}
	}
	return nil
}

// seriesVerification is what verifySeries found.
type seriesVerification struct {
	lines       []string // one per differing point (a few per series)
	files, runs int      // series files checked, runs they were recorded by
	bad         int      // files that differ from the record
	note        string   // why nothing was checked ("" when checked)
}

// verifySeries checks, for every run of the results database (--db, opened
// read-only; none: nothing to check), each trial's recorded series
// against the series file of its recorded cache entry, found in this
// --workdir's cache by its <stage>/<key> (entries are content-addressed,
// so a workdir that moved still holds them): every point must be there,
// once, with the same bits. The cache entries' digests (Verify) say a file
// is what its stage wrote; this says the record, which tables and
// comparisons read, is what the figures draw. It names the run, trial,
// metric and step of each difference.
func verifySeries(ctx context.Context, g *globalOptions) (*seriesVerification, error) {
	out := &seriesVerification{}
	if _, err := os.Stat(g.db); errors.Is(err, fs.ErrNotExist) {
		out.note = "no results database: series not checked"
		return out, nil
	}
	st, err := runs.OpenReadOnly(ctx, g.db)
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	defer st.Close()
	cache, err := filepath.Abs(workdir.Workdir(g.workdir).Cache())
	if err != nil {
		return nil, err
	}
	list, err := st.Runs(ctx, "")
	if err != nil {
		return nil, err
	}
	// The entry in this workdir's cache, by its <stage>/<key>.
	locate := func(o runs.Output) string {
		return filepath.Join(cache, filepath.Base(filepath.Dir(o.CacheDir)), filepath.Base(o.CacheDir), filepath.FromSlash(o.File))
	}
	for _, ri := range list {
		files, bad, paths, err := seriesFiles(ctx, st, ri.ID, locate)
		if err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			continue // none left in the cache (gc, evicted): nothing to compare
		}
		out.runs++
		for _, id := range slices.Sorted(maps.Keys(bad)) {
			// A damaged entry (the digests above name it): its points
			// cannot be what was recorded.
			out.files++
			out.bad++
			out.lines = append(out.lines, fmt.Sprintf("run %d trial %q: %v", ri.ID, id, bad[id]))
		}
		if len(files) == 0 {
			continue
		}
		recorded, err := st.RunSeries(ctx, ri.ID)
		if err != nil {
			return nil, err
		}
		names, err := st.TrialParams(ctx, ri.ID)
		if err != nil {
			return nil, err
		}
		for _, id := range slices.Sorted(maps.Keys(files)) {
			out.files++
			label := id
			var name string
			if json.Unmarshal([]byte(names[id]["name"]), &name) == nil && name != "" {
				label += " (" + name + ")"
			}
			d, _ := sweep.CompareSeries(sweep.TrialSeries{label: recorded[id]}, sweep.TrialSeries{label: files[id]}, nil)
			if len(d) == 0 {
				continue
			}
			out.bad++
			rel, _ := filepath.Rel(cache, paths[id])
			for _, l := range sweep.DriftLines(d, "results database", "cache", 3) {
				out.lines = append(out.lines, fmt.Sprintf("run %d %s (%s)", ri.ID, l, filepath.ToSlash(rel)))
			}
		}
	}
	return out, nil
}
