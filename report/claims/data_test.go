package claims

import (
	"context"
	"testing"
)

// TestDataText: the data column comes from the run's trials (the data set
// setting and the recorded regime), not from the experiment's description.
func TestDataText(t *testing.T) {
	r := &Run{trials: []trial{{variant: "adagrad", params: map[string]any{"dataset": "ml-100k"}, sum: map[string]float64{
		"data_ratings": 55375, "data_bins": 100, "data_per_bin_median": 340, "data_bins_per_user_median": 1,
		"data_per_item_bin_median": 1, "data_per_item_bin_q1": 1, "data_per_item_bin_q3": 2, "data_busiest_share": 0.87,
	}}}}
	got := r.dataText(context.Background())
	want := "data set ml-100k; regime: 55375 ratings in 100 bins, per bin median 340, bins per user median 1, per active item and bin median 1 (quartiles 1-2), busiest tenth of the bins 87% of the ratings"
	if got != want {
		t.Errorf("dataText:\n got %s\nwant %s", got, want)
	}
	art := &Run{trials: []trial{{params: map[string]any{"time_steps": 30.0}}}}
	if got := art.dataText(context.Background()); got != "artificial data generated from each trial's seed" {
		t.Errorf("artificial: %q", got)
	}
}
