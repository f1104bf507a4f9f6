package slurmexec

import (
	"context"
	"fmt"
	"os"
	"os/user"

	"goldstone/sweep"
)

// submitter is the user whose jobs count against MaxSubmitJobs:
// Options.User, else $USER, else the process's.
func (o *Options) submitter() string {
	if o.User != "" {
		return o.User
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// checkSubmitLimit refuses a submission of tasks array tasks (packed:
// fewer than its trials) that the
// user's MaxSubmitJobs (sacctmgr) would not let into the queue with the
// user's jobs already there: sbatch would refuse the array whole
// (QOSMaxSubmitJobPerUserLimit), after the run was recorded. The
// shared and collect jobs the run may submit count too. Without
// accounting (sacctmgr fails) or without a limit set, nothing is checked.
func (x *Executor) checkSubmitLimit(ctx context.Context, job *sweep.Job, tasks int) error {
	o := x.o
	u := o.submitter()
	if u == "" {
		return nil
	}
	c := o.client()
	limit, err := c.MaxSubmitJobs(ctx, u)
	if err != nil {
		o.log().Info("cannot read the user's MaxSubmitJobs (no accounting?); assuming no limit", "user", u, "err", err)
		return nil
	}
	if limit == 0 {
		return nil
	}
	queued, err := c.UserJobs(ctx, u)
	if err != nil {
		o.log().Info("cannot count the user's queued jobs; assuming none", "user", u, "err", err)
		queued = 0
	}
	others := 1 // the collect job
	if o.NoCollectJob {
		others = 0
	}
	if o.SharedJob {
		others++
	}
	room := limit - queued
	if tasks+others <= room {
		return nil
	}
	what := job.Experiment.Name + " (nothing submitted, no run recorded)"
	if job.RunID != 0 {
		what = fmt.Sprintf("run %d (nothing submitted; the run is left as it was)", job.RunID)
	}
	hint := "wait for some of the queued jobs to end, pack several trials into each task (--slurm-trials-per-task), or run the sweep in one allocation (docs/slurm.md, \"Many short trials: one allocation\")"
	return fmt.Errorf("the trials of %s need %d jobs in the queue (%d array tasks and %d other jobs) but user %s may have %d (MaxSubmitJobs, sacctmgr) and has %d queued: %s",
		what, tasks+others, tasks, others, u, limit, queued, hint)
}
