package train

import (
	"fmt"

	"goldstone/experiment/settings"
	"goldstone/models"
	"goldstone/optim"
)

// The settings of the training loop, the base optimizers and the symmetry
// steps. Adding an optimizer is its file in optim, a settings struct here
// (its options as tagged fields, Method and DefaultRate) and one
// RegisterChoice line in init; a symmetry step likewise implements
// GaugeSettings.

func init() {
	settings.RegisterChoice("optimizer", "gd", GDSettings{})
	settings.RegisterChoice("optimizer", "adagrad", AdaGradSettings{})
	settings.RegisterChoice("optimizer", "adam", AdamSettings{})

	settings.RegisterChoice("gauge", "none", NoGauge{})
	settings.RegisterChoice("gauge", "goldstone", GoldstoneSettings{})
	settings.RegisterChoice("gauge", "procrustes", ProcrustesSettings{})
}

// The settings structs that take defaults from a library constant.
var (
	_ settings.Defaulter = AdaGradSettings{}
	_ settings.Defaulter = AdamSettings{}
	_ settings.Defaulter = GoldstoneSettings{}
	_ settings.Defaulter = LoopSettings{}
)

// MethodSettings are a base optimizer's settings (the choice "optimizer").
type MethodSettings interface {
	// Method builds the optimizer for a learning-rate schedule.
	Method(rate optim.Schedule) optim.Method
	// Method32 builds it on float32 parameters (the float32 mode).
	Method32(rate optim.Schedule) optim.MethodOf[float32]
	// DefaultRate is the learning rate used when lr is 0.
	DefaultRate() float64
}

// GDSettings are plain gradient descent's options.
type GDSettings struct {
	Clip float64 `set:"clip" default:"0" check:">=0" doc:"GD: clip each gradient entry to [-clip, clip]; 0 disables"`
}

func (s GDSettings) Method(rate optim.Schedule) optim.Method {
	return &optim.GD{Rate: rate, Clip: s.Clip}
}
func (s GDSettings) Method32(rate optim.Schedule) optim.MethodOf[float32] {
	return &optim.GDOf[float32]{Rate: rate, Clip: s.Clip}
}
func (GDSettings) DefaultRate() float64 { return optim.DefaultGDRate }

// AdaGradSettings are AdaGrad's options.
type AdaGradSettings struct {
	Eps float64 `set:"adagrad_eps" check:">0" doc:"AdaGrad: epsilon added to the root of the accumulated squares"`
}

func (AdaGradSettings) Defaults() any {
	return AdaGradSettings{Eps: optim.DefaultAdaGradEps}
}
func (s AdaGradSettings) Method(rate optim.Schedule) optim.Method {
	return &optim.AdaGrad{Rate: rate, Eps: s.Eps}
}
func (s AdaGradSettings) Method32(rate optim.Schedule) optim.MethodOf[float32] {
	return &optim.AdaGradOf[float32]{Rate: rate, Eps: s.Eps}
}
func (AdaGradSettings) DefaultRate() float64 { return optim.DefaultAdaGradRate }

// AdamSettings are Adam's options.
type AdamSettings struct {
	Beta1 float64 `set:"adam_beta1" check:"[0,1)" doc:"Adam: decay of the first moment"`
	Beta2 float64 `set:"adam_beta2" check:"[0,1)" doc:"Adam: decay of the second moment"`
	Eps   float64 `set:"adam_eps" check:">0" doc:"Adam: epsilon"`
}

func (AdamSettings) Defaults() any {
	return AdamSettings{Beta1: optim.DefaultAdamBeta1, Beta2: optim.DefaultAdamBeta2, Eps: optim.DefaultAdamEps}
}
func (s AdamSettings) Method(rate optim.Schedule) optim.Method {
	return &optim.Adam{Rate: rate, Beta1: s.Beta1, Beta2: s.Beta2, Eps: s.Eps}
}
func (s AdamSettings) Method32(rate optim.Schedule) optim.MethodOf[float32] {
	return &optim.AdamOf[float32]{Rate: rate, Beta1: s.Beta1, Beta2: s.Beta2, Eps: s.Eps}
}
func (AdamSettings) DefaultRate() float64 { return optim.DefaultAdamRate }

// GaugeSettings are a symmetry step's settings (the choice "gauge").
type GaugeSettings interface {
	// Gauge builds the symmetry step on the trial's pool; nil: none.
	Gauge(pool *optim.Pool) optim.Gauge
	// Every is the number of base steps between two gauge rounds.
	Every() int
}

// NoGauge is training without a symmetry step.
type NoGauge struct{}

func (NoGauge) Gauge(*optim.Pool) optim.Gauge { return nil }
func (NoGauge) Every() int                    { return 0 }

// GoldstoneSettings are Goldstone-GD's options.
type GoldstoneSettings struct {
	K1         int     `set:"k1" default:"50" check:">0" doc:"a gauge round after every k1 base steps"`
	K2         int     `set:"k2" check:">0" doc:"Goldstone-GD: natural-gradient steps per round"`
	Rate       float64 `set:"gauge_lr" default:"0" check:">=0" doc:"Goldstone-GD: rho'; 0 uses the paper's automatic 1/(T N <Z^2>)"`
	Rotation   string  `set:"rotation" default:"exact" oneof:"exact linear" doc:"Goldstone-GD: apply exp(Gamma) (exact) or Z + Gamma Z (linear, the paper's)"`
	KeepFields bool    `set:"keep_fields" default:"true" doc:"Goldstone-GD: keep the gauge fields between rounds (the paper) instead of resetting them"`
	Guard      bool    `set:"guard" default:"true" doc:"Goldstone-GD: reject a round that raises psi and reset the fields"`
	FlipWalls  bool    `set:"flip_walls" default:"true" doc:"Goldstone-GD on tree couplings: remove reflection domain walls (exp(Gamma) reaches only rotations) before the continuous steps"`
	Search     string  `set:"gauge_search" default:"none" oneof:"none direction rate" doc:"Goldstone-GD: when a round's step would raise psi, none (the guard rejects it), direction (halve the step along the gauge direction) or rate (redo the round's steps at half the gauge rate) until psi falls"`
	RateScale  float64 `set:"gauge_lr_scale" default:"1" check:">=0" doc:"Goldstone-GD: multiplies rho' (the stability map: 1, 1/2, 1/4, 1/8); 0 takes no natural-gradient step at all, so a round is the reflection flips alone (an ablation)"`
	Concentrat bool    `set:"gauge_concentration" default:"false" doc:"Goldstone-GD: record round_concentration, the largest eigenvalue of any time step's Gram matrix Z_t Z_t^T against the mean sum_t ||Z_t||^2/(T d), every round (one more pass over the blocks per round)"`
}

// PruneKeys leaves gauge_lr_scale and gauge_concentration out of the key at
// their defaults, so trials made before they existed keep their keys.
func (GoldstoneSettings) PruneKeys(m map[string]any) {
	if v, ok := m["gauge_lr_scale"].(float64); ok && v == 1 {
		delete(m, "gauge_lr_scale")
	}
	if v, ok := m["gauge_concentration"].(bool); ok && !v {
		delete(m, "gauge_concentration")
	}
}

func (GoldstoneSettings) Defaults() any { return GoldstoneSettings{K2: optim.DefaultK2} }
func (s GoldstoneSettings) Every() int  { return s.K1 }
func (s GoldstoneSettings) Gauge(pool *optim.Pool) optim.Gauge {
	g := &optim.Goldstone{K2: s.K2, Rate: s.Rate, Reset: !s.KeepFields, NoGuard: !s.Guard, NoFlip: !s.FlipWalls, Pool: pool,
		RateScale: s.RateScale, FlipsOnly: s.RateScale == 0, Concentration: s.Concentrat}
	if s.Rotation == "linear" {
		g.Rotation = optim.RotationLinear
	}
	switch s.Search {
	case "direction":
		g.Search = optim.SearchDirection
	case "rate":
		g.Search = optim.SearchRate
	}
	return g
}

// ProcrustesSettings are Procrustes gauge fixing's options.
type ProcrustesSettings struct {
	K1          int  `set:"k1" default:"50" check:">0" doc:"a gauge round after every k1 base steps"`
	Reflections bool `set:"reflections" default:"true" doc:"Procrustes: allow reflections (O(d)); false restricts to SO(d)"`
}

func (s ProcrustesSettings) Every() int { return s.K1 }
func (s ProcrustesSettings) Gauge(pool *optim.Pool) optim.Gauge {
	return &optim.Procrustes{SO: !s.Reflections, Pool: pool}
}

// OptimSettings choose the base optimizer, its learning-rate schedule and
// the symmetry step.
type OptimSettings struct {
	Method  MethodSettings `set:"optimizer" default:"gd" doc:"base optimizer"`
	LR      float64        `set:"lr" default:"0" check:"rate" doc:"learning rate rho0 (0: the optimizer's default: gd and adagrad 0.01, adam 0.001)"`
	LRS0    float64        `set:"lr_s0" default:"0" check:">=0" doc:"schedule rho_s = lr (s0/(s+s0))^kappa; 0 keeps the rate constant"`
	LRKappa float64        `set:"lr_kappa" default:"0.7" check:">=0" doc:"decay exponent kappa of the schedule"`
	Gauge   GaugeSettings  `set:"gauge" default:"none" doc:"symmetry step"`
}

// PruneKeys keys the learning rate by its effective value and leaves out
// the decay exponent of a constant schedule.
func (s OptimSettings) PruneKeys(m map[string]any) {
	if s.LRS0 == 0 {
		delete(m, "lr_kappa")
	}
	if s.LR == 0 && s.Method != nil {
		m["lr"] = s.Method.DefaultRate()
	}
}

// Schedule is the learning-rate schedule.
func (s OptimSettings) Schedule() optim.Schedule {
	r := optim.Schedule{Rho0: s.LR, S0: s.LRS0, Kappa: s.LRKappa}
	if r.Rho0 == 0 {
		r.Rho0 = s.Method.DefaultRate()
	}
	if r.S0 == 0 {
		r.Kappa = 0
	}
	return r
}

// LoopSettings are the settings of the shared training loop.
type LoopSettings struct {
	settings.Seeded
	Steps     int     `set:"steps" default:"1000" check:">0" doc:"number of optimisation steps"`
	LogEvery  int     `set:"log_every" default:"1" check:">0" doc:"record step-wise metrics every this many steps"`
	GapEvery  int     `set:"gauge_gap_every" default:"0" check:">=0" doc:"record the gauge gap every this many steps (0: with every logged step)"`
	GapAround int     `set:"gauge_gap_around" default:"0" check:">=0" doc:"also record the gauge gap at every iterate within this many steps of a gauge round (before and after it), and at the start of every round (round_gap)"`
	InitScale float64 `set:"init_scale" check:">0" doc:"standard deviation of the random initial embeddings (independent per time step)"`
	Dim       int     `set:"dim" default:"3" check:">0" doc:"embedding dimension d"`
	Dtype     string  `set:"dtype" default:"float64" oneof:"float64 float32" doc:"element type of the parameters, their gradients and the optimizer state: float32 halves their memory and the bytes of every memory-bound pass, while losses, psi, the gauge rounds' overlaps and d x d work and every metric stay float64 (docs/maths.md); float32 in the movielens and dwe (inference = map) pipelines"`
	// DivergeFactor bounds the training (optim.Driver.DivergeFactor).
	DivergeFactor float64 `set:"diverge_factor" check:">0" doc:"the trial diverges (status diverged) at the first step whose loss, local loss or psi is not finite or exceeds diverge_factor x max(1, |loss at step 0|)"`
	Optim         OptimSettings
}

func (LoopSettings) Defaults() any {
	return LoopSettings{InitScale: models.DefaultInitStd, DivergeFactor: optim.DefaultDivergeFactor}
}

// PruneKeys leaves the default diverge_factor out of a trial's keys (trials
// keep their ids; a change of the default is a change of the train stages'
// versions).
func (s LoopSettings) PruneKeys(m map[string]any) {
	if s.DivergeFactor == optim.DefaultDivergeFactor {
		delete(m, "diverge_factor")
	}
	if s.Dtype == DtypeFloat64 {
		delete(m, "dtype") // every float64 trial keeps its key
	}
}

// The element types of the dtype setting.
const (
	DtypeFloat64 = "float64"
	DtypeFloat32 = "float32"
)

// Float32Pipelines names the pipelines whose trials may set dtype =
// "float32".
const Float32Pipelines = "movielens, dwe"

// Float32 reports whether the trial trains in float32 (dtype = "float32").
func (s LoopSettings) Float32() bool { return s.Dtype == DtypeFloat32 }

// RequireFloat64 is the plan-time error of a trial of a pipeline that
// trains in float64 only when it sets dtype = "float32" (nil otherwise).
func (s LoopSettings) RequireFloat64(pipeline, trial string) error {
	if s.Float32() {
		return fmt.Errorf("trial %s: dtype = %q: the %s pipeline trains in float64 only (dtype = \"float32\" is supported by: %s)", trial, s.Dtype, pipeline, Float32Pipelines)
	}
	return nil
}

// MFPrior are the dynamic matrix factorisation models' prior settings.
type MFPrior struct {
	Lambda float64 `set:"lambda" default:"10" check:">0" doc:"coupling strength of the time prior"`
	Gamma  float64 `set:"gamma" default:"0" check:">=0" doc:"local L2 regulariser gamma/2 ||Z_t||^2"`
}

// NewPool returns the pool a stage runs its parallel loops on; the stage
// closes it when it ends. Under a sweep (budget is the sweep's core budget,
// experiment.Env.Budget, which the pipeline hands to its stages when it builds
// them) it is a pool of the budget: it starts with the stage's workers
// (io.Workers()) and grows when cores go idle at the end of a sweep (see
// optim.Budget; results do not change). Without a budget (nil) it is a pool
// of workers of its own, nil (inline) for one.
func NewPool(budget *optim.Budget, workers int) *optim.Pool {
	if budget != nil {
		return budget.Pool(workers)
	}
	if workers <= 1 {
		return nil
	}
	return optim.NewPool(workers)
}

// ResumeKeys are a training stage's settings keys without the steps
// (pipeline.Resumable.ResumeParams): what the first s steps of a Loop
// compute does not depend on the budget, so its checkpoints are keyed
// without it and a longer run of the same trial continues a shorter one's.
func ResumeKeys(v any) map[string]any {
	m := settings.Keys(v)
	delete(m, "steps")
	return m
}
