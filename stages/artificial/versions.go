package artificial

// The cache versions of the pipeline's stages, one per stage. Bump a
// stage's version in the commit that changes what it writes for the same
// settings and inputs (its code, or code below it: models, optim, stages);
// TestGolden (stages/pipelines, testdata/golden.json here) names the stage
// whose outputs changed while its version did not. A stage downstream of
// a changed one needs no bump: its inputs changed, and so does its key.
//
// Until issue 18 one Version ("11") covered every stage. Train 12: a
// threshold never reached (steps_to_*) is runs.Never (+Inf), not NaN.
// Report 12: captions (figures.CaptionsFile) for every figure. Report 13:
// a figure is at least as wide as its title (figures.Curves). Train 13
// (issue 17): optim.SVD tracks the squared column norms through a sweep's
// rotations (other bits at d > 2: the artificial L*, Procrustes, the wall
// flips, the gauge gap).
// Train 14 (issue 23, Fig. 3 work): gauge round records (round_*) and
// gauge_accepted_share; train 14 (issue 23, Fig. 2 work):
// steps_to_excess_0.1 (a third threshold between 1 and 0.01), report 14:
// its paper-figures text names it. Train 15 and report 15: both together
// (the two branches had each bumped to 14). Train 16: optim.SVD replaces
// the singular vectors of columns zero to working precision (Procrustes
// and the wall flips applied maps that were not orthogonal once the
// overlaps were rank-deficient). Train 17: a training that diverges (a
// loss or psi not finite or past diverge_factor x max(1, |loss at step
// 0|)) is a result, not an error (diverged_* summaries, every threshold
// never); gauge_lowered_share.
// Train 18 (issue 27): the gauge-mode metrics max_gap_rel,
// steps_to_gap_0.1pct and steps_to_gap_10pct_peak (train.GapSummary).
// Train 19 (issue 30, pruning): nothing the training loop records
// depends on the budget (no extra record of the last step: its loss and
// psi are final_loss and final_psi; the gap around a gauge round past the
// end is recorded as a longer run would); the checkpoints are keyed
// without the steps (pipeline.Resumable).
const (
	TrainVersion  = "19" // train-artificial
	ReportVersion = "15" // report-artificial (its Draw)
)
