package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"

	"goldstone/pipeline"
)

var verifyFlags struct {
	evict bool
}

func init() {
	commands = append(commands, &command{
		name:    "verify",
		summary: "check every cache entry of --workdir against its recorded content digests",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&verifyFlags.evict, "evict", false, "remove the entries that fail (the next run recomputes them)")
		},
		run: runVerify,
	})
}

// runVerify prints one line per entry that fails and a summary line. Exit
// 1 when some entry failed (evicted or not), 2 when --workdir is not there
// or, with --evict, busy.
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
	if bad > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d cache entries failed verification", bad, len(reps))}
	}
	return nil
}
