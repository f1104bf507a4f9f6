package sweep

import (
	"fmt"
	"sort"
	"sync"

	"goldstone/runs"
)

// ExecutorInfo is what the run records of an executor need to know about
// it, by the name the runs table records (runs.executor).
type ExecutorInfo struct {
	Name string
	Doc  string
	// Detached: its trials run without the process that submitted them
	// (a batch back end: Slurm, worker processes). A running run of it
	// is never marked interrupted because its runner is gone, it is
	// followed with status, collect and cancel, and it is resumed only
	// by the same executor.
	Detached bool
}

var (
	executorsMu sync.Mutex
	executors   = map[string]ExecutorInfo{
		runs.ExecutorLocal: {Name: runs.ExecutorLocal, Doc: "this process, --jobs stages at once"},
	}
)

// RegisterExecutor adds an executor's name (batch back ends register
// through slurmexec.Register).
func RegisterExecutor(x ExecutorInfo) {
	executorsMu.Lock()
	defer executorsMu.Unlock()
	if _, dup := executors[x.Name]; dup || x.Name == "" {
		panic(fmt.Sprintf("sweep: executor %q registered twice or unnamed", x.Name))
	}
	executors[x.Name] = x
}

// LookupExecutor returns the executor of that name; ok is false for a
// name no package registered.
func LookupExecutor(name string) (ExecutorInfo, bool) {
	executorsMu.Lock()
	defer executorsMu.Unlock()
	x, ok := executors[name]
	return x, ok
}

// Detached reports whether runs of the executor named name run without
// their submitter (an unknown name counts as detached: its runs are left
// alone).
func Detached(name string) bool {
	x, ok := LookupExecutor(name)
	return !ok || x.Detached
}

// Executors are the registered executors, sorted by name.
func Executors() []ExecutorInfo {
	executorsMu.Lock()
	defer executorsMu.Unlock()
	var out []ExecutorInfo
	for _, x := range executors {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
