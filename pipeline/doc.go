// Package pipeline runs a DAG of cached stages.
//
// A Graph is a list of Nodes; each Node runs one Stage, names its inputs as
// Refs (an output of another node, or an external file or directory) and
// declares the names of the outputs it writes. Run executes the nodes as soon
// as their inputs are ready, at most Options.Jobs at a time; Plan is the dry
// run that says which nodes would run and why.
//
// # Cache contract
//
// The key of a node is the SHA-256 of its stage name, stage version,
// canonical parameter JSON (CanonicalJSON of Stage.Params), its declared
// output names and the sorted (input name, input content digest) pairs. An
// external input's digest is the SHA-256 of the file's content (of a
// directory: of its sorted relative file paths and their digests); the digest
// of another node's output is the one recorded in that node's cache manifest.
//
// Two nodes with the same key must produce the same outputs. A stage therefore
// has to be a pure function of (version, params, input contents): everything
// that changes its output goes into Params, a change in the code that changes
// the output bumps Version, and the result must not depend on IO.Workers or
// on scheduling. The runner does not check this; it trusts it.
//
// A cache entry lives at WorkDir/cache/<stage>/<key>/ and holds one file or
// directory per output plus manifest.json. It is built inside WorkDir/tmp/,
// fsynced, and renamed into place in one step, manifest last, so an entry is
// either complete or absent. The manifest records the content digest of
// every output. An entry is reused only if its manifest parses, carries the
// expected key and lists every declared output, and every output still has
// its recorded digest (outputs are re-hashed once per Run or Plan). An entry
// that fails this check is corrupt: Plan reports it (PlanItem.Corrupt), and
// Run evicts it (Event Corrupt, with the reason) and runs the node again.
// Verify checks the whole cache. Cache entries must be treated as read-only
// by stages.
//
// # Checkpoints
//
// A long stage may save its state part-way (IO.Checkpoint) under
// WorkDir/checkpoints/<stage>/<key>/, keyed like its cache entry, so that a
// run stopped part-way (cancelled, killed, a node lost) continues the node
// from its last checkpoint instead of from the start, with the same outputs.
// The directory is removed once the node has ended (done, or failed), and
// before a forced run of it. A Resumable stage (a training stage whose
// first s steps do not depend on its budget) keys its checkpoints by its
// parameters without the budget, and with Options.KeepCheckpoints they
// outlive the node, one saved at its end: a longer run of the same stage
// continues from there (a pruned search's promotion).
//
// A Tolerant node (a report over trials that may fail) runs once all its
// upstream nodes have ended, without the inputs of those that failed.
//
// Any number of Runs, in any processes, may share one WorkDir. Each
// builds its entries in its own scratch directory, WorkDir/tmp/run-*
// (locked while its process lives; a Run removes those of processes that
// are gone, so crash leftovers never become cache entries). Each cache
// entry has a lock file beside it, <key>.lock (flock, released by the OS
// when its holder exits): a Run holds it shared on every entry it uses
// until it returns, and exclusive while it computes the entry, so a node
// two Runs need is computed once and the other reads it; RemoveEntry (gc,
// Verify's eviction) removes an entry only under its exclusive lock, never
// one a live Run uses or writes. LockWorkDir remains for a caller that
// wants a workdir to itself (a repro's scratch workdir). The last key of each node ID is recorded under WorkDir/state/nodes
// so that Plan can say why a node will run again. Digests of external files
// are memoised in WorkDir/state/digests.json by (absolute path, size,
// mtime); files modified within the last two seconds are never memoised,
// so a quick same-size rewrite is not missed.
package pipeline
