package experiment

import (
	"fmt"
	"maps"
	"slices"

	"goldstone/experiment/settings"
)

// Shared decodes the settings T of the data stages that every trial of a
// sweep shares, and checks that they are the same in every trial (else
// the data would have to be prepared once per trial). With no trials it
// decodes the experiment's settings.
func Shared[T any](e *Experiment, trials []Trial) (T, error) {
	var first T
	if len(trials) == 0 {
		return first, settings.Decode(e.Settings, &first)
	}
	if err := settings.Decode(trials[0].Settings, &first); err != nil {
		return first, err
	}
	want := settings.Keys(first)
	for _, tr := range trials[1:] {
		var v T
		if err := settings.Decode(tr.Settings, &v); err != nil {
			return first, err
		}
		got := settings.Keys(v)
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if settings.FormatValue(got[k]) != settings.FormatValue(want[k]) {
				return first, fmt.Errorf("experiment %s: setting %s varies across trials; data preparation settings must be the same for the whole sweep", e.Name, k)
			}
		}
	}
	return first, nil
}
