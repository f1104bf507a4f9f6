package movielens

import (
	"strings"
	"testing"

	"goldstone/experiment"
	"goldstone/experiment/settings"
	"goldstone/report"
	"goldstone/trialio"
)

// TestPsiConvergenceTable: the reference is the lowest final psi of the
// trials that share everything but variant and seed; a trial that never
// enters the band counts as infinitely slow in its variant's median.
func TestPsiConvergenceTable(t *testing.T) {
	trial := func(variant string, seed int, lambda float64, psi ...float64) report.TrialResult {
		s := &trialio.Series{}
		for k, v := range psi {
			s.Add("psi", 10*k, v)
		}
		return report.TrialResult{
			Trial:   experiment.Trial{Name: variant, Variant: variant, Settings: settings.Values{"seed": seed, "lambda": lambda}},
			Series:  s,
			Summary: trialio.Summary{"final_psi": psi[len(psi)-1]},
		}
	}
	all := []report.TrialResult{
		trial("adagrad", 1, 10, 500, 300, 120, 108, 104),
		trial("adagrad", 2, 10, 500, 300, 200, 150, 130),
		trial("goldstone", 1, 10, 500, 101, 100.5, 100, 100),
		trial("goldstone", 2, 10, 500, 105, 100.9, 100, 100.2),
		trial("adagrad", 1, 1, 50, 40, 30, 20.1, 20),
		trial("goldstone", 1, 1, 50, 20, 20, 20, 20),
	}
	md := PsiConvergenceTable(all)
	for _, want := range []string{
		"| adagrad | 104 | 100 | 30 | never |",
		"| adagrad | 130 | 100 | never | never |",
		"| goldstone | 100 | 100 | 10 | 10 |",
		"| goldstone | 100.2 | 100 | 10 | 20 |",
		"| adagrad | 20 | 20 | 30 | 30 |",
		"| goldstone | 20 | 20 | 10 | 10 |",
		"| adagrad | 3 | 30 | never |",
		"| goldstone | 3 | 10 | 10 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no line %q in\n%s", want, md)
		}
	}
}
