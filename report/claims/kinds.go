package claims

import (
	"context"
	"maps"
	"slices"
)

// rowFunc computes a row's "ours" and "verdict" columns from a run (ctx:
// for the rows that read series from the run's store).
type rowFunc func(ctx context.Context, r *Run, p Params) (ours, verdict string)

// pure is a rowFunc that reads only the run's trials and summaries.
func pure(f func(r *Run, p Params) (ours, verdict string)) rowFunc {
	return func(_ context.Context, r *Run, p Params) (string, string) { return f(r, p) }
}

// sectionFunc renders a section's table from a run.
type sectionFunc func(r *Run, p Params) string

// kind is a verdict kind: the parameters it takes (all required) and the
// function that computes the row.
type kind struct {
	params []string
	row    rowFunc
}

// kinds are the verdict kinds by the name a [[claims]] table's verdict
// gives. A static table: nothing registers into it, so no file or init
// order can change it.
var kinds = map[string]kind{
	// Fig. 2: steps to L-L* below each threshold, baseline/method, censored
	// median ratio with its bootstrap interval against factor/2.
	"speedup": {[]string{"baseline", "method", "factor"}, pure(fig2Claim)},
	// Fig. 2 said as it is: reach with Fisher's test, the speed-up where
	// both reach (headline), the censored bound, the mechanism.
	"reach": {[]string{"baseline", "methods", "factor"}, pure(reachClaim)},
	// A long run read at the paper's length: stuck or slow.
	"stuck": {[]string{"method", "horizon"}, pure(stuckClaim)},
	// Fig. 2 at every init_scale of the run.
	"init-scale": {[]string{"baseline", "methods", "factor"}, pure(initClaim)},
	// The mechanism: log-log slopes of steps against T.
	"scaling": {[]string{"baseline", "method", "lambda"}, pure(scalingClaim)},
	// Fields kept against reset (variants NAME and NAME-reset) on the
	// artificial data.
	"keep-fields": {[]string{"methods", "labels"}, pure(keepClaim)},
	// Fig. 3: steps until psi stays within 1% of the run's reference.
	"psi-speedup": {[]string{"baseline", "methods", "factor"}, fig3Claim},
	// Fig. 3 through the gauge modes: steps until the gap stays below 0.1%
	// of psi, paired by seed, with intervals; the gap-tied psi band.
	"gauge-speedup": {[]string{"baseline", "methods", "factor"}, gaugeFig3Claim},
	// The stability map of the paper's update: rho' x scale, fields kept
	// and reset: divergence, rounds that lowered psi, concentration.
	"stability": {nil, pure(stabilityClaim)},
	// Fig. 3 on planted data, with the recovery of the planted vectors.
	"psi-speedup-planted": {[]string{"baseline", "methods", "factor"}, plantedFig3Claim},
	// What the gauge rounds of each Goldstone variant did.
	"rounds": {nil, roundsClaim},
	// Fig. 4: median cos(first, last), method minus baseline.
	"alignment": {[]string{"method"}, pure(alignIntervalClaim)},
	// Table 2: held-out log-likelihood, method minus baseline.
	"heldout-ll": {[]string{"method", "paper_gain"}, pure(llIntervalClaim)},
	// The decaying learning rate against a constant one (NAME-constant).
	"schedule": {nil, pure(scheduleClaim)},
	// The share of training time in gauge rounds.
	"overhead": {[]string{"paper_share"}, pure(overheadClaim)},
	// Fields kept against reset on word embeddings: steps until the gauge
	// gap stays below 1% of psi.
	"keep-fields-gap": {nil, pure(dweKeepClaim)},
}

// sectionKind is a section kind: its parameters and its renderer.
type sectionKind struct {
	params []string
	render sectionFunc
}

// sectionKinds are the section kinds by the name a [[claim_sections]]
// table's section gives.
var sectionKinds = map[string]sectionKind{
	// Fig. 2 per (init_scale, threshold): the speed-up of each method.
	"speedup-per-setting": {[]string{"baseline", "methods", "factor"}, initSection},
	// The stability map as a table: rho' x scale by fields kept/reset.
	"stability-map": {nil, stabilitySection},
}

func kindNames() []string        { return slices.Sorted(maps.Keys(kinds)) }
func sectionKindNames() []string { return slices.Sorted(maps.Keys(sectionKinds)) }
