package main

import (
	"fmt"

	"goldstone/sweep"
)

// checkpointsText says what gc did with the checkpoints ("" when there
// are none).
func checkpointsText(c *sweep.GCCheckpoints, verb string) string {
	if c.Kept == 0 && c.Stale == 0 {
		return ""
	}
	s := fmt.Sprintf("checkpoints: %d of interrupted trials kept (%s; their next run resumes from them)", c.Kept, byteText(c.KeptBytes))
	if c.Stale > 0 {
		s += fmt.Sprintf(", %s %d of trials that have ended or of pruned searches that have (%s)", verb, c.Stale, byteText(c.StaleBytes))
	}
	return s
}

// checkpointsList names each checkpoint directory gc removes (a dry run's
// list), with why no run resumes from it and its size.
func checkpointsList(c *sweep.GCCheckpoints, verb string) []string {
	var out []string
	for _, s := range c.Removed {
		out = append(out, fmt.Sprintf("  %s %s (%s; %s)", verb, termText(s.Dir), s.Why, byteText(s.Bytes)))
	}
	return out
}
