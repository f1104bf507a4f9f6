// Package dwe implements Dynamic Word Embeddings (R. Bamler and S. Mandt,
// "Dynamic Word Embeddings", ICML 2017), the dynamic skip-gram model in its
// smoothing variant, as used in Section 5.3 of the Goldstone-GD paper
// (Bamler and Mandt, ICML 2018): a MAP model (MAP) and black-box variational
// smoothing (Variational), a Trainer that runs the DWE schedule on
// optim.Driver (so Goldstone-GD or Procrustes can act on the means), and
// evaluation and export helpers.
//
// # Model
//
// At time step t (time stamp tau_t) word i has a word vector u_{t,i} and a
// context vector v_{t,i} in R^d. With x_ij = u_i . v_j, the likelihood of a
// step's counts is
//
//	log p = sum_ij n+_ij log sig(x_ij) + n-_ij log sig(-x_ij)
//	      = -sum_ij [ (n+_ij + n-_ij) softplus(-x_ij) + n-_ij x_ij ]
//
// with sparse positive counts n+ and rank-one negatives n-_ij = a_i b_j (in
// DWE: a_i the word marginal of n+, b_j the context marginal to the 3/4,
// normalised, times a ratio; StepCounts.Negatives). The prior is
// per coordinate a random walk with the local Gaussian term:
// u_{t+1} ~ N(u_t, sigma_t^2), sigma_t^2 = D (tau_{t+1} - tau_t) (D = 1e-3
// per year), times N(0, sigma0^2) at every step (sigma0^2 = 1); the same
// for context vectors. In the Goldstone layout Z_t = (U_t, V_t) is d x 2V
// (optim.Blocks{0, T, 2V, d}), the random walk is psi with the chain graph
// of weights 1/sigma_t^2 (ChainGraph), and the N(0, sigma0^2) term is local.
//
// # What the likelihood costs, and what we compute
//
// The rewrite with n+ + n- makes only the linear term cheap:
// sum_ij a_i b_j x_ij = (sum_i a_i u_i) . (sum_j b_j v_j) is O(V d). The
// softplus term still runs over all V^2 pairs, because n- is dense: every
// pair (i,j) with a_i b_j > 0 contributes a_i b_j softplus(x_ij), which has
// no low-rank form. So the exact likelihood and its gradient are O(V^2 d)
// per step; the DWE reference code (TensorFlow, GPU) also evaluates the
// dense V x V (or minibatch M x N) matrices of x and n+ + n-. Here:
//
//   - Exact: the pair matrix is computed in tb x tb tiles (tb = 64; the tile
//     products on optim.GemmNT and optim.GemmAcc: AVX2/FMA micro-kernels, or
//     their pure-Go versions with the same results on CPUs without FMA), consumed at once (loss, then G_ij = dloss/dx_ij, then
//     gU += G V, gV += G^T U by two more tile products) and never stored:
//     6 V^2 d flops plus one exp, one log(1+e) and one division per pair
//     (inline, branch-free; within a few ulp of math.Exp and math.Log1p;
//     on AVX-512 8 pairs at a time, elem512_amd64.s, else AVX2 4 at a
//     time, with the Go loop's bits). Positive counts are
//     merged into the tile loop through a CSR row index. Time steps are
//     independent and run in parallel, one chunk per step; within a step the
//     order of summation is fixed, so results are bit-identical at any
//     worker count. StepNegLogLik (evaluation, loss only) instead splits one
//     step over fixed chunks of 256 words.
//   - Minibatch (first phase of training, as in DWE): M random words and N
//     random contexts, uniform without replacement, the same for all steps;
//     the likelihood of the M x N sub-matrix (positives included) is scaled
//     by V^2/(M N). Since P(i in batch, j in batch) = M N / V^2, loss and
//     gradient are unbiased (TestMinibatchUnbiased averages all 1 x 1
//     batches exactly). The priors and the entropy are never subsampled.
//
// At V = 10,000, d = 100, T = 188 a full-batch step is 1.9e10 pairs,
// about 1.1e13 flops; see the benchmarks (BenchmarkMAPStep, and
// BenchmarkKernel against the previous kernel) for measured pairs per second.
//
// Training: MAP.Problem and Variational.Problem are what optim.Driver trains
// (MAP's local prior is Problem.L2, applied in the Driver's fused pass).
// The float32 mode (float32.go): MAP.Problem32 for optim.DriverOf[float32]
// and Trainer.Run32, the parameters, gradient and Adam state in float32,
// the losses in float64 (docs/maths.md says what each quantity keeps).
//
// # Variational smoothing
//
// For every column c (word or context vector) and dimension k, q over the T
// steps is N(mu, (B^T B)^{-1}) with B upper bidiagonal (B_tt = nu_t,
// B_{t,t+1} = omega_t), as in DWE. One reparameterised sample per step:
// x = mu + y, B y = eps (back substitution). Its pathwise gradient needs a
// second solve, B^T lambda = g (forward substitution), with
// dL/dnu_t = -lambda_t y_t and dL/domega_t = -lambda_t y_{t+1}.
//
// Unlike a sampled prior, the prior expectation is computed analytically:
// E_q[log prior] needs only the tridiagonal of Sigma = (B^T B)^{-1}, which
// follows from Sigma_{T-1,T-1} = 1/nu_{T-1}^2,
// Sigma_tt = (1 + omega_t^2 Sigma_{t+1,t+1})/nu_t^2 and
// Sigma_{t,t+1} = -omega_t Sigma_{t+1,t+1}/nu_t (O(T), differentiated in
// reverse mode). This splits the random-walk term exactly into psi(mu),
// which the driver adds and the gauge step acts on, and a part that depends
// only on (nu, omega). The entropy is sum_t log nu_t + const.
//
// Positivity of nu: we optimise rho = log nu (nu = exp(rho)) with plain
// Adam, the "log-parameterised" choice; the entropy gradient in rho is the
// constant 1. The parameter vector is [mu | rho | omega] (see Variational).
//
// A gauge step rotates the means only. That leaves the MAP local loss
// exactly invariant; for Variational it is exact only as far as q's
// covariance is isotropic across the d dimensions (the paper applies it
// there all the same).
//
// # Evaluation and export
//
// PredictiveLogLik interpolates the means linearly in time between the two
// training steps around a held-out step and divides the exact log-likelihood
// by sum (n+ + n-). WordAging (between any two steps) and FirstLastCosines
// give the paper's word-aging table and cosine histogram. WriteParquet and WriteWord2Vec
// export word vectors.
//
// Invariants: parameters are flat []float64 laid out as optim.Blocks with
// Offset 0 (means first); LocalLoss overwrites grad, excludes psi, allocates
// nothing in steady state, runs its parallel loops on Config.Pool (nil:
// inline), and is
// deterministic given x and the current minibatch/noise (Resample, SetBatch,
// SetNoise). A model is not safe for concurrent use.
package dwe
