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
// release ingests to the same ratings.parquet); export_embeddings. train-logistic-mf 21: summary gap_seconds (the time
// spent measuring the gauge gap); report-movielens 21: its table shows it.
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
	ReportVersion     = "21" // report-movielens (its Draw)
)
