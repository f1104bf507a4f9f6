package sweep

import "goldstone/experiment"

// RunObserver is told the run's id, its number of trials and how to find a
// node's trial once Execute knows them, before any stage runs; a
// RunOptions.Observer may implement it (the progress display and the JSON
// log use it to put the run id and the trial on every line).
type RunObserver interface {
	RunStarted(runID int64, trials int, trialOf func(node string) (id, name string, ok bool))
}

// trialOf returns the node -> trial lookup of b for RunObserver.
func trialOf(b *experiment.Built) func(node string) (string, string, bool) {
	return func(node string) (string, string, bool) {
		i := b.TrialOf(node)
		if i < 0 {
			return "", "", false
		}
		tr := b.Trials[i].Trial
		return tr.ID, tr.Name, true
	}
}
