// Package ratings reads ratings tables: the MovieLens layouts (u.data, ratings.dat,
// ratings.csv) as presets of a Layout, a user's own table of any layout (TableSettings:
// named or numbered columns, a delimiter, a header or none, a time format), text plain,
// gzip or zstd, or Parquet; and the Parquet tables the movielens pipeline writes and reads
// (Rating, Binary, Binned, IDMap, IDName, Embedding; Read, ReadAll, WriteTable).
//
// Ingest turns a table into the Rating Parquet table and its id dictionary (IDNamesPath):
// blocks are parsed in parallel and written in input order, text ids get negative codes
// in order of first appearance, exact duplicate (user, item, time) rows are dropped.
// CheckTable reads the start of a table as Ingest would, so a wrong header stops a run
// before it starts. The formats are a registry (formats.go): a new text layout is one
// entry there.
package ratings
