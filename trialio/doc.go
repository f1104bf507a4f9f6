// Package trialio holds the file formats of a trial's results: the
// step-wise series (Arrow IPC and Parquet: metric, step, value), the
// summary metrics (JSON with NaN as null), trained parameters as NumPy
// .npy arrays, and small JSON and copy helpers. Every writer is atomic
// (internal/atomicfile): a reader sees a whole file or none.
//
// It imports nothing of goldstone above internal/: reports, the sweep's
// recorder and the Slurm worker read what the stages write with the same
// code.
package trialio
