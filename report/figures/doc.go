// Package figures renders the project's figures as PNG files with gonum/plot.
//
// Three entry points cover every figure of the reports:
//
//   - Curves: one or more tiled panels of line series (loss and psi against
//     step, linear or log axes), with one shared legend to the right of the
//     panels so that it never covers data.
//   - Trajectories: a grid (rows = methods, columns = snapshots) of 2-d
//     projections of the per-embedding trajectories t -> z_{t,i}.
//   - Histogram: overlaid or stacked histograms over fixed bins, medians marked;
//     HistCounts and Median give the same numbers for textual reports.
//
// Invariants:
//
//   - Every file is written atomically: the PNG is encoded into a temporary
//     file in the destination directory, which is then renamed over path. A
//     failed call leaves no partial file behind.
//   - Output depends only on the spec: colours come from a fixed palette
//     (Palette) assigned in order of first appearance of a series' colour key,
//     projections are computed deterministically, there is no randomness.
//   - Non-finite values are never drawn, and neither are non-positive values on
//     a log axis; such points are dropped, the remaining points are joined.
//   - Long series are thinned for drawing (min/max bucketing, see Curves) so that
//     files stay small and rendering fast; first, last, minimum and maximum
//     points of every series are always kept.
//
// The package imports no other package of this module.
package figures
