// Package models holds the models goldstone trains: their local losses
// l(X_t; Z_t) with gradients, their coupling graphs, initialisers, data
// generators and evaluation helpers.
//
//   - DenseMF: dense dynamic Gaussian matrix factorisation (the paper's
//     artificial experiment; Artificial and OptimalLoss generate its data and
//     its optimum).
//   - SparseMF: the core of the sparse dynamic matrix factorisations of
//     ratings (blocked layout, prior, minibatches, one-pass gradient), whose
//     likelihood is a small link of the linear predictor:
//   - LogisticMF: sparse dynamic logistic matrix factorisation of binary
//     ratings (the MovieLens experiment), with EvaluateRatings, BaseRate and
//     AUC for held-out metrics.
//   - GaussianMF: explicit ratings with a Gaussian likelihood, user, item
//     and bin biases and a global mean (held-out RMSE, MAE and
//     log-likelihood).
//   - PoissonMF: implicit counts with a Poisson likelihood of rate
//     softplus(eta), the same biases and an intercept (held-out Poisson
//     deviance and log-likelihood).
//   - RatingsModel, RatingsSpec: the seam a ratings pipeline trains through;
//     a likelihood is a model and a settings struct that builds it
//     (LogisticSettings, GaussianSettings, PoissonSettings).
//   - PlantedDistance compares learned embeddings with planted ones up to a
//     global orthogonal map.
//
// Invariants:
//   - Parameters are one flat []float64 laid out as optim.Blocks with Offset 0:
//     column i of Z_t is x[(t*N+i)*D : (t*N+i+1)*D]. For the matrix
//     factorisations the first columns of every Z_t are the row (user) vectors
//     U_t and the remaining ones the column (item) vectors V_t.
//   - LocalLoss returns l plus local regularisers and OVERWRITES grad with its
//     gradient. It does not include psi: the coupling is returned by Graph and
//     added by the optimizer driver (see ProblemOf). A model may also offer
//     Problem() (the SparseMF models do): the Driver's problem, whose local loss adds
//     into the Driver's zeroed gradient buffer and whose L2 regulariser
//     (optim.Problem.L2) is applied in the Driver's fused pass.
//   - Parallel loops run on the model's *optim.Pool field (nil: inline).
//   - Every local loss is invariant under a common orthogonal map of all
//     columns of a Z_t.
//   - LocalLoss allocates nothing after the first call and splits its work into
//     chunks that depend only on the data, reducing partial sums in chunk
//     order, so results are bit-identical at any worker count.
//   - Results are the same bits on every build (see optim's doc): products
//     are rounded before they are added, the FMA kernels (lmf_amd64.s) and
//     their Go twins (math.FMA; forced by the purego tag) agree bit for bit,
//     and exp, log and normal draws are optim's (optim.Exp, optim.Log,
//     optim.NormFloat64), never the standard library's.
//   - A model value is not safe for concurrent use; its exported fields must
//     not change after the first call of a method.
package models
