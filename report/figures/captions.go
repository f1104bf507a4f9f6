package figures

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"goldstone/internal/atomicfile"
)

// CaptionsFile is the file of a report directory that holds the captions
// of its figures: one JSON object, a figure's file name (the PNG) to its
// caption. The HTML page and summary.md show each figure with its caption.
const CaptionsFile = "captions.json"

// Sentences shared by the captions of line figures.
const (
	// LinesNote: how the lines of trials are told apart (experiment.Curve).
	LinesNote = "One line per trial: colour = variant; dash and marker = the trial's grid setting other than the seed (the seeds of one setting share them)."
	// BandsNote: what a shaded band is (curvePanel's jagged series) and
	// what is not drawn on a log axis.
	BandsNote = "A shaded band, where a line on a log axis is noise over more than three decades (the gauge gap between exact gauge fixes), spans the minimum to the maximum of each of 40 buckets of steps, the line their median; values below 1e-9 of their series' maximum (round-off) and non-positive values on a log axis are not drawn."
)

// ReadCaptions reads dir's captions (none: an empty map).
func ReadCaptions(dir string) (map[string]string, error) {
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, CaptionsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, CaptionsFile), err)
	}
	return out, nil
}

// AddCaptions merges captions into dir's captions file (written
// atomically), replacing those of the same figures.
func AddCaptions(dir string, captions map[string]string) error {
	all, err := ReadCaptions(dir)
	if err != nil {
		return err
	}
	for k, v := range captions {
		all[k] = v
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, CaptionsFile), append(b, '\n'))
}
