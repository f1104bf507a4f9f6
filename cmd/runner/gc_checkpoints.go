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
		s += fmt.Sprintf(", %s %d of trials that have ended (%s)", verb, c.Stale, byteText(c.StaleBytes))
	}
	return s
}
