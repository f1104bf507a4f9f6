// Package train is the training loop the pipelines share and the choices
// it is configured with: the base optimizers (gd, adagrad, adam) and
// symmetry steps (none, goldstone, procrustes), each a settings struct
// registered as a choice (settings.RegisterChoice), the learning-rate
// schedule, the loop's own settings (LoopSettings, which embed the trial's
// seed) and the MF prior. Loop runs an optim.Driver and records loss,
// psi and the gauge gap as series and the summary metrics every pipeline
// reports. A training that diverges (a loss or psi not finite or past
// diverge_factor times its start) is a result, not an error: the loop
// ends, says where (Loop.Diverged, the diverged_* summary metrics) and
// reports what the run never reached as never or NaN.
//
// Adding an optimizer is its file in optim, a settings struct here (its
// options as tagged fields, Method and DefaultRate) and one RegisterChoice
// line in init.
//
// Parallel loops run on the pool NewPool gives a stage: one of the sweep's
// core budget (experiment.Env.Budget, handed to the stage when the pipeline
// builds it), or of the stage's own workers. Results never depend on the
// number of workers.
package train
