// Package movielens is the movielens pipeline (the paper's Section 5.2): it reads ratings
// tables through formats/ratings (the MovieLens releases, or a user's own table of any
// layout: ratings.Layout, ratings.TableSettings), turns them into the binned (binarized, or explicit) and split Parquet tables
// a dynamic ratings model trains on, and trains, evaluates and reports per trial (stages.go:
// Pipeline and its stages as named types; likelihood.go: the model seam, the choice
// "likelihood" of a models.RatingsModel; report.go).
//
// The stages are pure functions from files to files, each writing its output atomically
// (a temporary file in the destination directory, then a rename):
//
//	Locate / Fetch   find or download a release (ml-100k .. ml-32m, ml-latest, ml-latest-small)
//	Ingest           a ratings table (text of any Layout, the MovieLens ones as presets, plain,
//	                 gzip or zstd; or Parquet) -> Rating Parquet + id dictionary (ratings.Ingest)
//	Binarize         drop ratings equal to the exact median (or label them: Ties); x = +1 above,
//	                 -1 below -> Binary Parquet; refuses ratings that leave one label empty
//	                 (Binarizable; RatingCounts checks the source table before a run)
//	                 (binarized likelihoods only; explicit ratings go from Ingest to Bin)
//	Bin              T bins of equal duration, dense user/item indices -> Binned Parquet + id maps
//	Split            seeded exact-proportion split -> train / valid / test Binned Parquet
//	Generate         a synthetic release (ml-20m CSV) from a planted dynamic logistic model
//
// Invariants: every output depends only on the inputs and the seed, never on the number of
// workers (blocks are parsed in parallel but written in input order; text ids get their codes
// in input order). Memory is bounded by the block size and the row-group size, not by the
// input size, except where a stage must hold one small value per rating (Ingest: an 8-byte
// hash for the duplicates check; Split: one byte per rating) or per distinct id (Ingest's
// dictionary of text ids, Bin).
//
// Parquet columns (see ratings.Rating, Binary, Binned): user and item are int32 (original ids
// before Bin, a text id standing as its negative code from IDNamesPath; dense indices after,
// with the original ids or codes beside them as user_id and item_id), rating float32, x int8 (+1/-1; 0 for explicit ratings), timestamp int64 unix seconds, t int32 (the time
// bin, named t as the time-step index of every Parquet output); compression zstd; row
// groups of DefaultRowGroupSize rows unless told otherwise.
package movielens
