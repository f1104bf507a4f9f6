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
// release ingests to the same ratings.parquet); export_embeddings.
//
// 21 (issue 20, the model seam): binarize and bin keep the rating beside x
// (bin also reads explicit ratings, x = 0), split copies it; train (renamed
// train-movielens) builds the likelihood's model and lists its parameter
// arrays in model.json; evaluate (renamed evaluate-movielens) reports the
// model's own metrics (gaussian: RMSE, MAE, the global mean's and the
// bias-only predictor's); the report draws the validation RMSE.
//
// Issue 21 (researcher, made beside the seam's 21): a threshold never
// reached (steps_to_gap_1pct) is runs.Never (+Inf), not NaN (train; 22
// with the seam's); captions (figures.CaptionsFile) for every figure, and a
// figure at least as wide as its title (report; 23 with the seam's).
//
// Train and evaluate 24 (issue 17): optim.SVD tracks the squared column
// norms through a sweep's rotations (other bits at d > 2: Procrustes, the
// wall flips, the gauge gap, the planted distance); 23 is skipped, the
// seam branch's pipeline-wide version of train-movielens before issue 18.
//
// Issue 23: gauge round records (round_*, round_gap) and
// gauge_accepted_share, user biases in the logistic bias option (train 23,
// 25 with issue 17's 24); the static references on the same split
// (references-movielens, merged into each logistic trial's summary by
// evaluate 22, 25 with issue 17's 24); the psi convergence and references
// tables (report 24). Issue 23's DWE branch: summary gap_seconds (the time
// spent measuring the gauge gap; train 25, report 24: its table shows it).
// Train 26, evaluate 26, report 25, references 23: both together (the two
// branches had bumped to the same numbers).
//
// Train 27 and evaluate 27: optim.SVD replaces the singular vectors of
// columns zero to working precision (they were normalised unorthogonalised,
// so U V^T was not orthogonal once the prior had shrunk unused dimensions:
// Procrustes rounds and wall flips raised psi and changed the loss; the
// planted distance's map).
//
// Bin 22 and evaluate 28 (issue 27): the bin stage's info.json carries the
// data's regime (ratings per bin, active bins per user, ratings per active
// item and bin, the busiest tenth's share), and evaluate copies it into
// every trial's summary as data_* metrics; report 26 shows it once, in a
// "Data regime" section, and its summary table leaves the data_* columns
// out (report.MarkdownTable, report.DataPrefix).
//
// Train 28, evaluate 28, report 26: a training that diverges (a loss or
// psi not finite or past diverge_factor x max(1, |loss at step 0|)) is a
// result, not an error (diverged_* summaries, gauge_lowered_share); its
// model is not evaluated (held-out metrics and planted distances NaN); the
// psi convergence table shows the rounds that lowered psi, not those
// accepted.
//
// Evaluate 29 and report 27: both of the above together (each branch had
// bumped evaluate to 28 and report to 26 on its own).
//
// Train 29 (issue 27): the gauge-mode metrics max_gap_rel,
// steps_to_gap_0.1pct and steps_to_gap_10pct_peak (train.GapSummary).
//
// Evaluate 30 (issue 27): embedding_rms and gain_over_bias_test_ll in every
// summary (do the embeddings carry anything beyond the user + item biases).
//
// Report 28 (issue 27): the gauge gap / psi panel in curves.png and the
// gap-tied psi band in the psi convergence table.
// Train 30 (issue 30, pruning): nothing the training loop records
// depends on the budget (no extra record of the last step: its loss and
// psi are final_loss and final_psi; the gap around a gauge round past the
// end is recorded as a longer run would); valid_* every valid_every
// steps only, not at the last step; the checkpoints are keyed without
// the steps (pipeline.Resumable).
const (
	GenerateVersion   = "20" // generate-planted
	IngestVersion     = "20" // ingest-movielens
	BinarizeVersion   = "21" // binarize
	BinVersion        = "22" // bin (and bin-explicit)
	SplitVersion      = "21" // split (and split-explicit)
	ActivityVersion   = "20" // activity
	TrainVersion      = "30" // train-movielens
	TrialVersion      = "2"  // trial-movielens (train and evaluate in one node: keep = best or none)
	EvaluateVersion   = "30" // evaluate-movielens
	EmbeddingsVersion = "20" // export-embeddings
	ReportVersion     = "28" // report-movielens (its Draw)
	ReferenceVersion  = "23" // references-movielens
)
