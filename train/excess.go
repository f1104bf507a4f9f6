package train

import "strconv"

// ExcessThresholds are the targets L - L* < thr whose first logged step is
// a summary metric (ExcessMetric): the paper's Fig. 2 shows L - L* over
// several decades, so a speed-up is judged at each of them.
var ExcessThresholds = []float64{1, 0.1, 0.01}

// ExcessMetric names the summary metric of the first logged step with
// L - L* < thr: steps_to_excess_1, steps_to_excess_0.1, steps_to_excess_0.01.
func ExcessMetric(thr float64) string {
	return "steps_to_excess_" + strconv.FormatFloat(thr, 'g', -1, 64)
}
