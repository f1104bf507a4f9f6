package movielens

// The cache versions of the pipeline's stages, one per stage. Bump a
// stage's version in the commit that changes what it writes for the same
// settings and inputs (its code, or code below it: models, optim, stages);
// TestGolden (stages/pipelines, testdata/golden.json here) names the stage
// whose outputs changed while its version did not. A stage downstream of
// a changed one needs no bump: its inputs changed, and so does its key.
//
// Until issue 18 one Version ("20") covered every stage: its history:
// 19: same bits on every build (issue 17). 20: the ingest stage reads any table
// layout (TableSettings), keeps the last of duplicate (user, item, time) rows and
// writes ratings.ids.parquet and ingest.json beside ratings.parquet (a MovieLens
// release ingests to the same ratings.parquet); export_embeddings. Train 21:
// a threshold never reached (steps_to_gap_1pct) is runs.Never (+Inf), not
// NaN. Report 21: captions (figures.CaptionsFile) for every figure. Report
// 22: a figure is at least as wide as its title (figures.Curves).
const (
	GenerateVersion   = "20" // generate-planted
	IngestVersion     = "20" // ingest-movielens
	BinarizeVersion   = "20" // binarize
	BinVersion        = "20" // bin
	SplitVersion      = "20" // split
	ActivityVersion   = "20" // activity
	TrainVersion      = "21" // train-logistic-mf
	EvaluateVersion   = "20" // evaluate-logistic-mf
	EmbeddingsVersion = "20" // export-embeddings
	ReportVersion     = "22" // report-movielens (its Draw)
)
