// Package fault kills the process at a named point when the environment
// variable GOLDSTONE_FAULT names it. The fault-injection tests use it to
// stop a runner with SIGKILL (no deferred cleanup, no signal handler) at
// moments that an outside observer cannot hit reliably: inside a stage,
// between a stage's last write and its cache entry, inside a results
// transaction. Unset, a Point costs one string comparison.
//
// GOLDSTONE_FAULT is "NAME" (the first time Point(NAME) is reached) or
// "NAME@N" (the N-th time); a suffix "!int" or "!term" sends SIGINT (as
// Ctrl-C does) or SIGTERM instead of SIGKILL, and Point returns after a
// pause of signalPause, so that the process goes on as it would after the
// signal and the test sees how promptly it stops. Names in use: "start:STAGE", "progress:STAGE",
// "promote:STAGE", "promoted:STAGE" (package pipeline), "runs:batch",
// "runs:sync", "runs:trial" (package runs), "atomicfile:BASENAME" (a file
// written and not yet renamed into place), "export:file" (after each file
// of an export), "gc:files", "gc:rows", "repro:ran" and "report:page"
// (command runner), "report:copy" (after each file a report copies into
// its folder; command runner), "train:step" (after each step of a training loop,
// package train; its checkpoint, if due, is written),
// "slurm:submitted" (sbatch returned the trials job's id, not yet recorded;
// package sweep/slurmexec), "search:wave" (a wave of a search ended, the
// next not yet suggested; package sweep), "search:waiting" (a search's
// wave on a batch back end is not finished at a poll of its waiting loop;
// package sweep/slurmexec).
package fault

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Env is the environment variable read at start-up.
const Env = "GOLDSTONE_FAULT"

// signalPause is how long Point waits after sending a signal: time for
// the process's handler (signal.NotifyContext) to cancel its context.
const signalPause = 100 * time.Millisecond

var (
	name  string
	nth   int64     = 1
	sig   os.Signal // nil: SIGKILL
	hits  atomic.Int64
	armed = parse(os.Getenv(Env))
)

func parse(s string) bool {
	if s == "" {
		return false
	}
	if base, kind, ok := strings.Cut(s, "!"); ok {
		switch kind {
		case "int":
			s, sig = base, os.Interrupt
		case "term":
			s, sig = base, syscall.SIGTERM
		}
	}
	name = s
	if i := strings.LastIndexByte(s, '@'); i > 0 {
		if n, err := strconv.ParseInt(s[i+1:], 10, 64); err == nil && n >= 1 {
			name, nth = s[:i], n
		}
	}
	return true
}

// Point kills the process if GOLDSTONE_FAULT names this point and this is
// the N-th time it is reached (or sends it SIGINT or SIGTERM and returns).
func Point(point string) {
	if !armed || point != name {
		return
	}
	if hits.Add(1) != nth {
		return
	}
	p, err := os.FindProcess(os.Getpid())
	if sig != nil {
		if err == nil {
			p.Signal(sig)
		}
		time.Sleep(signalPause)
		return
	}
	if err == nil {
		p.Kill() // SIGKILL on unix
	}
	select {} // never returns: the kill is asynchronous
}
