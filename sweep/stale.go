package sweep

import (
	"context"
	"fmt"

	"goldstone/runs"
)

// MarkStaleRuns marks interrupted the runs left "running" by a runner that
// is gone: killed (SIGKILL, a crash, a power cut) before it could say so.
// A run counts as stale when its owner (the runner that created or last
// resumed it: runs.Owner) was on this host and its process no longer
// exists, or its pid now names a process started at another time (a
// recycled pid). Runs owned on other hosts, whose processes cannot be
// checked from here, and runs executed on a Slurm cluster (whose trials run
// without their submitter) are left alone. A run that another runner
// claims between the check and the mark is left alone too. It returns the
// runs it marked. The run command resumes such a run anyway; this is for
// the others: a killed repro, which no command resumes, and gc, which never
// deletes a running run.
func MarkStaleRuns(ctx context.Context, st *runs.Store) ([]runs.RunInfo, error) {
	all, err := st.Runs(ctx, "")
	if err != nil {
		return nil, err
	}
	var marked []runs.RunInfo
	for _, ri := range all {
		owner := ri.Owner()
		if ri.Status != runs.StatusRunning || owner.Liveness() != runs.OwnerGone {
			continue
		}
		exe, err := st.Executor(ctx, ri.ID)
		if err != nil {
			return marked, err
		}
		if Detached(exe) {
			continue
		}
		ok, err := st.MarkRunInterrupted(ctx, ri.ID, owner, fmt.Sprintf("interrupted: its runner (pid %d on %s) is gone", ri.PID, ri.Host))
		if err != nil {
			return marked, err
		}
		if ok {
			marked = append(marked, ri)
		}
	}
	return marked, nil
}
