//go:build race

package optim

// raceEnabled: the race detector changes allocation counts (sync.Pool drops items).
const raceEnabled = true
