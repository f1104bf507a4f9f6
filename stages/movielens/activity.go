package movielens

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

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
}

func (*ActivityStage) Name() string    { return "activity" }
func (*ActivityStage) Version() string { return Version }
func (s *ActivityStage) Params() any {
	return map[string]any{"bins": s.Bins, "reference": s.Reference}
}

func (s *ActivityStage) Run(ctx context.Context, io *pipeline.IO) error {
	own, err := ReadAll[Rating](ctx, io.Input("ratings"))
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
	return atomicfile.WriteFile(io.Output("activity.md"), []byte(b.String()))
}

// readRatingsFile parses a ratings file in any supported format, gzipped
// when its name ends in .gz.
func readRatingsFile(path string) ([]Rating, error) {
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
