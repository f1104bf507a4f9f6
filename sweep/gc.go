package sweep

import (
	"context"
	"errors"

	"goldstone/runs"
)

// ClaimForDeletion makes o (a gc) the owner of each run of old before gc
// deletes it (runs.Store.ClaimRun), so that no runner resumes a run while
// its files and rows go: a runner that starts the same configuration
// meanwhile is refused (*runs.OwnedError) as beside any live owner. A run
// that a live runner claimed since old was read (it resumed it) is not
// claimed and is returned in inUse: gc keeps it. A gc killed after its
// claims leaves the runs "running" under a dead owner: the next command
// marks them interrupted (MarkStaleRuns) and the next gc deletes them.
func ClaimForDeletion(ctx context.Context, st *runs.Store, old []runs.RunInfo, o runs.Owner) (claimed, inUse []runs.RunInfo, err error) {
	for _, r := range old {
		var oe *runs.OwnedError
		switch err := st.ClaimRun(ctx, r.ID, o); {
		case errors.As(err, &oe):
			inUse = append(inUse, r)
		case errors.Is(err, runs.ErrNotFound): // deleted by another gc
		case err != nil:
			return claimed, inUse, err
		default:
			claimed = append(claimed, r)
		}
	}
	return claimed, inUse, nil
}
