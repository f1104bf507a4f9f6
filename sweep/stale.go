package sweep

import (
	"context"
	"fmt"
	"goldstone/runs"
	"os"
	"syscall"
)

// MarkStaleRuns marks interrupted the runs left "running" by a runner that
// is gone: killed (SIGKILL, a crash, a power cut) before it could say so.
// A run counts as stale when it was started on this host by a process that
// no longer exists; runs of other hosts and runs executed on a Slurm
// cluster (whose trials run without their submitter) are left alone. It
// returns the runs it marked. The run command resumes such a run anyway;
// this is for the others: a killed repro, which no command resumes, and
// gc, which never deletes a running run.
func MarkStaleRuns(ctx context.Context, st *runs.Store) ([]runs.RunInfo, error) {
	all, err := st.Runs(ctx, "")
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	var marked []runs.RunInfo
	for _, ri := range all {
		if ri.Status != runs.StatusRunning || ri.Host != host || processAlive(&ri) {
			continue
		}
		exe, err := st.Executor(ctx, ri.ID)
		if err != nil {
			return marked, err
		}
		if exe == runs.ExecutorSlurm {
			continue
		}
		ok, err := st.MarkRunInterrupted(ctx, ri.ID, fmt.Sprintf("interrupted: its runner (pid %d on %s) is gone", ri.PID, ri.Host))
		if err != nil {
			return marked, err
		}
		if ok {
			marked = append(marked, ri)
		}
	}
	return marked, nil
}

// processAlive reports whether the run's process is still alive on this host.
func processAlive(ri *runs.RunInfo) bool {
	host, _ := os.Hostname()
	if ri.Host != host || ri.PID <= 0 {
		return false
	}
	if ri.PID == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(ri.PID)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}
