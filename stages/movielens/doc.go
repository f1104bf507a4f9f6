// Package movielens is the movielens pipeline (the paper's Section 5.2): it reads MovieLens
// rating files, turns them into the binned, binarized and split Parquet tables that dynamic
// logistic matrix factorisation trains on, and trains, evaluates and reports per trial
// (stages.go: Pipeline and its stages as named types; report.go).
//
// The stages are pure functions from files to files, each writing its output atomically
// (a temporary file in the destination directory, then a rename):
//
//	Locate / Fetch   find or download a release (ml-100k .. ml-32m, ml-latest, ml-latest-small)
//	Ingest           ratings text (u.data, ratings.dat, ratings.csv; plain or gzip) -> Rating Parquet
//	Binarize         drop ratings equal to the exact median; x = +1 above, -1 below -> Binary Parquet
//	Bin              T bins of equal duration, dense user/item indices -> Binned Parquet + id maps
//	Split            seeded exact-proportion split -> train / valid / test Binned Parquet
//	Generate         a synthetic release (ml-20m CSV) from a planted dynamic logistic model
//
// Invariants: every output depends only on the inputs and the seed, never on the number of
// workers (blocks are parsed in parallel but written in input order). Memory is bounded by
// the block size and the row-group size, not by the input size, except where a stage must
// hold one small value per rating (Split: one byte per rating) or per distinct id (Bin).
//
// Parquet columns (see Rating, Binary, Binned): user and item are int32 (original MovieLens
// ids before Bin; dense indices after, with the original ids beside them as user_id and
// item_id), rating float32, x int8 (+1/-1), timestamp int64 unix seconds, t int32 (the time
// bin, named t as the time-step index of every Parquet output); compression zstd; row
// groups of DefaultRowGroupSize rows unless told otherwise.
package movielens
