package movielens

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"goldstone/formats/ratings"

	"goldstone/internal/atomicfile"
	"goldstone/pipeline"
)

// ReferenceRelease is the real release whose activity statistics the
// planted generator is calibrated to (ActiveBinsSmall) and which the
// planted experiments' reports show next to the generated data's.
const ReferenceRelease = "ml-latest-small"

// ActivityStage writes activity.md: the activity statistics (Activity) of
// the experiment's ratings (input "ratings", Ingest's table) over Bins
// bins, side by side with those of the reference release (optional input
// "reference", a ratings file) when it is given.
type ActivityStage struct {
	Bins      int
	Reference string // name of the reference release, "" without one
	// Calibration, when set, adds the planted generator's settings next to
	// the values derived from real data and from the model's prior.
	Calibration *Calibration
}

// Calibration is what the planted data's calibration section compares:
// the generator's settings and the model prior of the trials (Lambda and
// Gamma are NaN when they vary across the trials).
type Calibration struct {
	Planted       PlantedSettings
	Lambda, Gamma float64
}

func (*ActivityStage) Name() string    { return "activity" }
func (*ActivityStage) Version() string { return ActivityVersion }
func (s *ActivityStage) Params() any {
	p := map[string]any{"bins": s.Bins, "reference": s.Reference}
	if c := s.Calibration; c != nil {
		cal := map[string]any{"planted": c.Planted, "lambda": fmt.Sprint(c.Lambda), "gamma": fmt.Sprint(c.Gamma)}
		if c.Planted.Growth != DefaultGrowth { // keys made before planted_growth existed stay (its JSON is "-")
			cal["growth"] = c.Planted.Growth
		}
		p["calibration"] = cal
	}
	return p
}

func (s *ActivityStage) Run(ctx context.Context, io *pipeline.IO) error {
	own, err := ratings.ReadAll[ratings.Rating](ctx, io.Input("ratings"))
	if err != nil {
		return err
	}
	names := []string{"this experiment's ratings"}
	acts := []Activity{ActivityOf(own, s.Bins)}
	if io.HasInput("reference") {
		ref, err := readRatingsFile(io.Input("reference"))
		if err != nil {
			return err
		}
		names = append(names, s.Reference+" (reference)")
		acts = append(acts, ActivityOf(ref, s.Bins))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Activity statistics (%d bins of equal duration over each data set's span)\n\n", s.Bins)
	b.WriteString(ActivityTable(names, acts))
	if len(acts) == 1 && s.Reference != "" {
		fmt.Fprintf(&b, "\nThe reference release %s was not found under the data directory: no real column.\n", s.Reference)
	}
	if s.Calibration != nil {
		b.WriteString(s.Calibration.Markdown())
	}
	return atomicfile.WriteFile(io.Output("activity.md"), []byte(b.String()))
}

// Markdown is the calibration section: each calibrated setting of the run,
// the value derived from ml-latest-small or from the model's prior, and
// where that value comes from. A setting that differs is marked: it was not
// calibrated.
func (c *Calibration) Markdown() string {
	var b strings.Builder
	b.WriteString("\n## Calibration of the planted data\n\n")
	b.WriteString("Each generator setting of this run against the value derived from real data or from the model (not tuned to any claim; README, Planted MovieLens data).\n\n")
	b.WriteString("| setting | this run | derived | derived from |\n|---|---|---|---|\n")
	row := func(key string, got, want float64, from string) {
		mark := ""
		if math.IsNaN(want) || math.Abs(got-want) > 5e-5*math.Max(1, math.Abs(want)) {
			mark = " (differs: not calibrated)"
		}
		fmt.Fprintf(&b, "| `%s` | %.4g%s | %.4g | %s |\n", key, got, mark, want, from)
	}
	p := c.Planted
	row("planted_active_bins", p.ActiveBins, ActiveBinsSmall,
		fmt.Sprintf("mean active bins (of 100) per user on %s (the activity table above)", ReferenceRelease))
	row("planted_drift", p.Drift, PriorDrift(c.Lambda, c.Gamma),
		fmt.Sprintf("PriorDrift(lambda = %g, gamma = %g): the model's own chain prior as a stationary AR(1) process", c.Lambda, c.Gamma))
	row("planted_scale", p.Scale, ScaleForGain(EmbeddingGainSmall, p.Dim),
		fmt.Sprintf("ScaleForGain(%.4f nats, D = %d): the planted vectors' own held-out gain over the base rate equals what the embeddings add to the bias terms on %s (%.4f with biases, %.4f bias only)",
			EmbeddingGainSmall, p.Dim, ReferenceRelease, RealGainSmall, BiasGainSmall))
	return b.String()
}

// readRatingsFile parses a ratings file in any supported format, gzipped
// when its name ends in .gz.
func readRatingsFile(path string) ([]ratings.Rating, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	return ReadRatingsText(path, r)
}
