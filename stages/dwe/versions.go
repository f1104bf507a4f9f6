package dwe

// The cache versions of the pipeline's stages, one per stage. Bump a
// stage's version in the commit that changes what it writes for the same
// settings and inputs (its code, or code below it: models, optim, stages);
// TestGolden (stages/pipelines, testdata/golden.json here) names the stage
// whose outputs changed while its version did not. A stage downstream of
// a changed one needs no bump: its inputs changed, and so does its key.
//
// Until issue 18 one Version ("13") covered every stage: its history:
// 2: the aging table counts the query word as a candidate (one word aging,
// models/dwe.WordAging). 5: the step file records each bin's first and last
// year with data; the aging table names a step by those years. 12: same bits
// on every build (issue 17). 13: JSON Lines corpora, csv and jsonl times may be
// dates (the year is kept), zstd inputs. Train 14: a threshold never
// reached (steps_to_gap_1pct) is runs.Never (+Inf), not NaN. Report 14:
// captions (figures.CaptionsFile) for every figure. Report 15: a figure
// is at least as wide as its title (figures.Curves). Train 15 (issue 17):
// optim.SVD tracks the squared column norms through a sweep's rotations
// (other bits at d > 2: Procrustes, the wall flips, the gauge gap).
// Train 16 (issue 23): gauge round records (round_*) and
// gauge_accepted_share; train 16 (issue 23, the DWE verdicts): summary
// gap_seconds (the time spent measuring the gauge gap, for the gauge
// overhead without the measurement), report 16: its table shows it. Train
// 17 and report 17: both together (the two branches had each bumped to 16).
// Train 18: optim.SVD replaces the singular vectors of columns zero to
// working precision (Procrustes and the wall flips applied maps that were
// not orthogonal once the overlaps were rank-deficient). Train 19,
// evaluate 14, report 18: a training that diverges (a loss or psi not
// finite or past diverge_factor x max(1, |loss at step 0|)) is a result,
// not an error (diverged_* summaries, gauge_lowered_share); its embeddings
// are not evaluated (test_ll, valid_ll, median_first_last_cos NaN), and
// the report says so in place of its histogram and aging table. Train 20
// (issue 27): the gauge-mode metrics max_gap_rel, steps_to_gap_0.1pct and
// steps_to_gap_10pct_peak (train.GapSummary).
// Train 21 (issue 30, pruning): nothing the training loop records
// depends on the budget (no extra record of the last step: its loss and
// psi are final_loss and final_psi; the gap around a gauge round past the
// end is recorded as a longer run would).
// Train 22 (issue 33): the float32 mode's element-wise work in float32
// (models/dwe elem32); other bits for dtype = "float32" trials only, float64
// trials write what they wrote.
// No bump for pruning's resumable train stage (issue 30): the stage's
// checkpoints are keyed without the steps (pipeline.Resumable) and keep the
// random source as it was before their step's draw, so a longer run of a
// trial continues a shorter one's; every output is the same (TestGolden),
// and no earlier checkpoint is found under the new keys.
// No bump for early_stopping (issue 30): off, it is in no trial's keys and
// nothing written changes (TestGolden); on, its trials have keys of their own.
const (
	IngestVersion   = "13" // ingest-corpus
	BinVersion      = "13" // bin-corpus
	VocabVersion    = "13" // vocab
	CountVersion    = "13" // count
	TrainVersion    = "22" // train-dwe
	EvaluateVersion = "14" // evaluate-dwe
	ReportVersion   = "18" // report-dwe (its Draw)
)
