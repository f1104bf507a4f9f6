package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// MaxSubmitJobs returns the smallest MaxSubmitJobs of user's associations
// (sacctmgr -n -P show assoc user=USER format=MaxSubmitJobs): how many of
// the user's jobs, each array task counted, the cluster accepts in the
// queue at once. 0 means no limit: none is set. A cluster without
// accounting (slurmdbd) cannot say: sacctmgr fails, and so does
// MaxSubmitJobs; callers then assume no limit.
func (c *Client) MaxSubmitJobs(ctx context.Context, user string) (int, error) {
	out, err := c.exec(ctx, or(c.Sacctmgr, "sacctmgr"), []string{"-n", "-P", "show", "assoc", "user=" + user, "format=MaxSubmitJobs"}, "")
	if err != nil {
		return 0, err
	}
	limit := 0
	for n, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := strconv.Atoi(line)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("sacctmgr: line %d: MaxSubmitJobs %q: want a count", n+1, line)
		}
		if v > 0 && (limit == 0 || v < limit) {
			limit = v
		}
	}
	return limit, nil
}

// UserJobs returns how many jobs of user are in the queue, each array
// task counted (squeue -h -r -u USER): what counts against MaxSubmitJobs.
func (c *Client) UserJobs(ctx context.Context, user string) (int, error) {
	out, err := c.exec(ctx, or(c.Squeue, "squeue"), []string{"-h", "-r", "-u", user, "-o", "%i"}, "")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n, nil
}
