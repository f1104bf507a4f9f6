package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"goldstone/experiment"
	"goldstone/report/htmlreport"
	"goldstone/runs"
	"goldstone/sweep"
)

var gcFlags struct {
	keepLast int
	dryRun   bool
}

func init() {
	commands = append(commands, &command{
		name:    "gc",
		summary: "delete old runs and the cache entries, reports and logs no remaining run uses",
		flags: func(fs *flag.FlagSet) {
			fs.IntVar(&gcFlags.keepLast, "keep-last", -1, "keep the newest N runs of each experiment (and kind); required, except that --dry-run alone shows what each N would free")
			fs.BoolVar(&gcFlags.dryRun, "dry-run", false, "only say what would be deleted")
		},
		run: runGC,
	})
}

// runGC deletes old runs in an order a kill cannot spoil: it plans what
// the runs own (runs.Store.DeleteRuns, dry run), removes the files (each
// cache entry renamed out of the cache in one step, then deleted), and
// deletes the rows last, in one transaction. A gc killed before the rows
// are gone leaves the runs recorded and the next gc plans and finishes the
// same deletion; files already removed are skipped. Recorded paths of a
// workdir or reports directory that has moved since are found under the
// current ones.
func runGC(ctx context.Context, g *globalOptions, _ *flag.FlagSet, _ []string) error {
	if gcFlags.keepLast < 0 && !gcFlags.dryRun {
		return usageErr("gc: say how many runs of each experiment to keep: --keep-last N (--dry-run alone shows what each N would free)")
	}
	st, err := openResultsRW(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	if gcFlags.keepLast < 0 {
		return gcPolicies(ctx, g, st)
	}
	return gcWith(ctx, g, st, gcFlags.keepLast, gcFlags.dryRun, g.stdout)
}

// gcPolicies says, without deleting anything, what each --keep-last N
// would delete and free: N = 0, 1, 2, 3, 5, 10, ... up to the most runs an
// experiment (and kind) has.
func gcPolicies(ctx context.Context, g *globalOptions, st *runs.Store) error {
	most := 0
	counts := map[string]int{}
	list, err := st.ListRuns(ctx, runs.RunFilter{Experiment: g.experiment})
	if err != nil {
		return err
	}
	for _, r := range list {
		k := r.Experiment + "\x00" + r.Kind
		counts[k]++
		most = max(most, counts[k])
	}
	if most == 0 {
		fmt.Fprintln(g.stdout, "nothing to delete: no runs")
		return nil
	}
	fmt.Fprintln(g.stdout, "what each --keep-last N would delete and free (a dry run: nothing is deleted):")
	for _, n := range []int{0, 1, 2, 3, 5, 10, 20, 50, 100} {
		if n >= most {
			break
		}
		var b strings.Builder
		if err := gcWith(ctx, g, st, n, true, &b); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "--keep-last %d:\n", n)
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			fmt.Fprintf(g.stdout, "  %s\n", line)
		}
	}
	fmt.Fprintf(g.stdout, "--keep-last %d or more: nothing (no experiment has more than %d runs)\n", most, most)
	return nil
}

// gcWith deletes (or with dryRun only measures) the runs beyond the newest
// keepLast of each experiment and what only they use (sweep.GC), and says
// so on w.
func gcWith(ctx context.Context, g *globalOptions, st *runs.Store, keepLast int, dryRun bool, w io.Writer) error {
	if !dryRun {
		recoverStale(ctx, g, st)
	}
	verb := "deleted"
	if dryRun {
		verb = "would delete"
	}
	rep, err := sweep.GC(ctx, st, sweep.GCOptions{Experiment: g.experiment, KeepLast: keepLast, DryRun: dryRun,
		WorkDir: g.workdir, Reports: g.reports, Warn: g.stderr})
	if err != nil {
		return err
	}
	for _, r := range rep.InUse {
		fmt.Fprintf(g.stderr, "gc: keeping run %d (%s): a runner resumed it\n", r.ID, termText(r.Experiment))
	}
	if !gcSay(w, keepLast, verb, rep) {
		return nil
	}
	if !dryRun {
		if fi, err := os.Stat(g.reports); err == nil && fi.IsDir() {
			if _, err := htmlreport.WriteIndex(ctx, st, g.reports, experiment.Headline); err != nil {
				return err
			}
		}
	}
	return nil
}

// gcSay prints what gc did (or would do) on w; false when it deleted no run.
func gcSay(w io.Writer, keepLast int, verb string, rep *sweep.GCReport) bool {
	old, c := rep.Runs, rep
	var idText []string
	for _, r := range old {
		idText = append(idText, fmt.Sprintf("%d (%s)", r.ID, termText(r.Experiment)))
	}
	if t := checkpointsText(rep.Checkpoints, verb); t != "" {
		fmt.Fprintln(w, t)
		if verb != "deleted" && gcFlags.keepLast >= 0 { // a dry run of one N lists them
			for _, l := range checkpointsList(rep.Checkpoints, verb) {
				fmt.Fprintln(w, l)
			}
		}
	}
	if len(old) == 0 {
		fmt.Fprintf(w, "nothing to delete: no experiment has more than %d runs\n", keepLast)
		return false
	}
	fmt.Fprintf(w, "%s %d runs: %s\n", verb, len(old), strings.Join(idText, ", "))
	batchText := ""
	if c.Batches > 0 {
		batchText = fmt.Sprintf(", %d Slurm batch directories", c.Batches)
	}
	fmt.Fprintf(w, "%s %d cache entries%s and %d report and log files no remaining run uses: %s freed\n", verb, c.Entries, batchText, c.Files, byteText(c.Freed))
	return true
}

func byteText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
