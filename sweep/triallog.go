package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"goldstone/internal/safetext"
	"goldstone/pipeline"
)

// trialLogs writes one log file per trial: what its stages logged, when
// they started and ended, and their errors. The files are created in dir
// on a trial's first event and referenced from the results store.
type trialLogs struct {
	dir   string
	files map[string]*os.File // trial id -> file
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

// logTrial appends a line for a trial node's event to its trial's log file.
func (r *recorder) logTrial(ctx context.Context, ev pipeline.Event) {
	if r.logs == nil || r.logs.dir == "" {
		return
	}
	ti := r.built.TrialOf(ev.Node)
	if ti < 0 {
		return
	}
	tr := r.built.Trials[ti].Trial
	var line string
	switch ev.Kind {
	case pipeline.Started:
		line = "started " + ev.Node
	case pipeline.Log:
		line = ev.Node + ": " + ev.Msg
	case pipeline.Done:
		line = fmt.Sprintf("done %s in %s", ev.Node, ev.Elapsed.Round(time.Millisecond))
	case pipeline.Cached:
		line = "cached " + ev.Node
	case pipeline.Failed:
		msg := ev.Reason
		if ev.Err != nil {
			msg = ev.Err.Error()
		}
		line = fmt.Sprintf("FAILED %s: %s", ev.Node, msg)
	case pipeline.Skipped:
		// Only into a log the trial already has: a trial that never
		// started gets no file (its status says why), so that a
		// cancelled sweep of many trials does not create one each.
		if r.logs.files[tr.ID] == nil {
			return
		}
		line = fmt.Sprintf("skipped %s: %s", ev.Node, ev.Reason)
	case pipeline.Corrupt:
		line = fmt.Sprintf("corrupt cache entry of %s evicted: %s", ev.Node, ev.Reason)
	default:
		return
	}
	f := r.logs.files[tr.ID]
	if f == nil {
		if err := os.MkdirAll(r.logs.dir, 0o777); err != nil {
			r.log.Error("trial log", "run", r.run, "trial", tr.ID, "err", err)
			r.logs.dir = ""
			return
		}
		path := filepath.Join(r.logs.dir, unsafeName.ReplaceAllString(tr.ID, "_")+".log")
		var err error
		if f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666); err != nil {
			r.log.Error("trial log", "run", r.run, "trial", tr.ID, "err", err)
			return
		}
		r.logs.files[tr.ID] = f
		fmt.Fprintf(f, "%s run %d trial %s (%s)\n", time.Now().UTC().Format(time.RFC3339), r.run, tr.ID, safetext.Escape(tr.Name))
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if err := r.st.SetTrialLog(ctx, r.run, tr.ID, path); err != nil {
			r.log.Error("trial log", "run", r.run, "trial", tr.ID, "err", err)
		}
	}
	// What a stage logs may quote its data (a field, a header, an id):
	// its control characters are written as escapes (\x1b), so that the
	// log, and its copy in the reports folder, show them as text.
	fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), safetext.Escape(strings.TrimRight(line, "\n")))
}

// close closes the log files.
func (l *trialLogs) close() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Close()
	}
}
