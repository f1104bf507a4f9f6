package artificial

// The cache versions of the pipeline's stages, one per stage. Bump a
// stage's version in the commit that changes what it writes for the same
// settings and inputs (its code, or code below it: models, optim, stages);
// TestGolden (stages/pipelines, testdata/golden.json here) names the stage
// whose outputs changed while its version did not. A stage downstream of
// a changed one needs no bump: its inputs changed, and so does its key.
//
// Until issue 18 one Version ("11") covered every stage. train 13: optim.SVD
// tracks the squared column norms through a sweep's rotations (other bits
// at d > 2: the artificial L*, Procrustes, the wall flips, the gauge gap;
// 12 was this change's number on the bits branch before it met issue 18).
const (
	TrainVersion  = "13" // train-artificial
	ReportVersion = "11" // report-artificial (its Draw)
)
