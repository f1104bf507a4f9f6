package figures

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TrajSpec describes a grid of trajectory panels: row r is a method, column c
// a snapshot (e.g. a training step), and Data[r][c] the embeddings then.
type TrajSpec struct {
	Title string
	Rows  []string     // row (method) names, len(Data)
	Cols  []string     // column (snapshot) names, e.g. "step 0", len(Data[r])
	Data  [][]Snapshot // Data[r][c]; all snapshots share N and D
	// Labels optionally names the N embeddings in the legend (at most 20
	// are listed); nil lists none.
	Labels []string
	// Basis optionally fixes the projection: 2×D row-major, the rows are the
	// figure's x and y directions, applied to uncentred z. nil means PCA (see
	// Trajectories).
	Basis []float64
}

// Snapshot holds T·N vectors of dimension D: z_{t,i} = Z[(t*N+i)*D : (t*N+i+1)*D].
type Snapshot struct {
	T, N, D int
	Z       []float64
}

const (
	trajTileW   = 3.2 * vg.Inch
	trajTileH   = 3.0 * vg.Inch
	trajMarkers = 60 // markers along a trajectory only up to this many steps t
	maxLabels   = 20
)

// Trajectories draws spec into a PNG at path, written atomically. Each panel
// shows, for every embedding i, the path t -> z_{t,i} projected to 2-d as a
// polyline with small markers, in the colour of i (palette for N <= 10, evenly
// spaced hues otherwise); a larger filled square marks t = 0. Markers along
// the path are omitted when T > 60.
//
// The projection is the same for every panel: unless spec.Basis is given, it
// is the PCA of all T·N points of the last snapshot of the first row (centred
// at their mean; each axis signed so its largest component is positive; if
// those points have no spread, the first two coordinates). For D = 1 the
// panels plot z against t instead. The axis ranges are shared by the panels of
// a column (so methods compare at equal scale at each snapshot) and, except
// for D = 1, x and y spans are equal. Non-finite points are dropped.
func Trajectories(path string, spec TrajSpec) error {
	n, d, err := trajShape(path, spec)
	if err != nil {
		return err
	}
	proj, xlab, ylab, err := trajProjection(spec, d)
	if err != nil {
		return fmt.Errorf("trajectories %s: %w", path, err)
	}
	pts, colRange := trajPoints(spec, n, d, proj)
	plots, lines, startThumb := trajPlots(spec, n, d, xlab, ylab, pts, colRange)
	entries := trajLegend(spec, n, lines, startThumb)

	ncol := len(spec.Cols)
	leg, lw, lh := sideLegend(entries)
	th := titleHeight(spec.Title)
	w := vg.Length(ncol)*trajTileW + lw
	h := th + max(vg.Length(len(spec.Data))*trajTileH, lh+vg.Points(20))
	return paintBoth(path, w, h, func(dc draw.Canvas) {
		dc = drawTitle(dc, spec.Title)
		tiles := draw.Tiles{
			Rows: len(spec.Data), Cols: ncol,
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8),
			PadX: vg.Points(10), PadY: vg.Points(10),
		}
		cvs := plot.Align(plots, tiles, draw.Crop(dc, 0, -lw, 0, 0))
		for r := range plots {
			for c := range plots[r] {
				plots[r][c].Draw(cvs[r][c])
			}
		}
		if len(entries) > 0 {
			leg.Draw(draw.Crop(dc, w-lw+vg.Points(4), 0, 0, -vg.Points(20)))
		}
	})
}

// trajShape checks that spec has a snapshot for every row and column, each
// consistent in itself and of the same N and D as [0][0], and returns N and D.
func trajShape(path string, spec TrajSpec) (n, d int, err error) {
	if len(spec.Data) == 0 || len(spec.Data) != len(spec.Rows) {
		return 0, 0, fmt.Errorf("trajectories %s: %d data rows for %d row names", path, len(spec.Data), len(spec.Rows))
	}
	ncol := len(spec.Cols)
	n, d = -1, -1
	for r, row := range spec.Data {
		if len(row) != ncol || ncol == 0 {
			return 0, 0, fmt.Errorf("trajectories %s: row %d (%q): %d snapshots for %d column names", path, r, spec.Rows[r], len(row), ncol)
		}
		for c, s := range row {
			if s.T < 1 || s.N < 1 || s.D < 1 || len(s.Z) != s.T*s.N*s.D {
				return 0, 0, fmt.Errorf("trajectories %s: snapshot [%d][%d]: T=%d N=%d D=%d but len(Z)=%d", path, r, c, s.T, s.N, s.D, len(s.Z))
			}
			if n < 0 {
				n, d = s.N, s.D
			}
			if s.N != n || s.D != d {
				return 0, 0, fmt.Errorf("trajectories %s: snapshot [%d][%d]: N=%d D=%d, want N=%d D=%d as [0][0]", path, r, c, s.N, s.D, n, d)
			}
		}
	}
	return n, d, nil
}

// trajPoints projects every snapshot: pts[r][c][i] is the finite part of the
// path of embedding i in panel (r, c), and colRange[c] the x and y ranges of
// the points of column c.
func trajPoints(spec TrajSpec, n, d int, proj func(t int, z []float64) (float64, float64)) (pts [][][]plotter.XYs, colRange [][2]span) {
	ncol := len(spec.Cols)
	pts = make([][][]plotter.XYs, len(spec.Data)) // [r][c][i]
	colRange = make([][2]span, ncol)
	for c := range colRange {
		colRange[c] = [2]span{newRange(), newRange()}
	}
	for r, row := range spec.Data {
		pts[r] = make([][]plotter.XYs, ncol)
		for c, s := range row {
			pts[r][c] = make([]plotter.XYs, n)
			for i := range n {
				xy := make(plotter.XYs, 0, s.T)
				for t := range s.T {
					z := s.Z[(t*n+i)*d : (t*n+i+1)*d]
					px, py := proj(t, z)
					if !finite(px) || !finite(py) {
						continue
					}
					xy = append(xy, plotter.XY{X: px, Y: py})
					colRange[c][0].add(px)
					colRange[c][1].add(py)
				}
				pts[r][c][i] = xy
			}
		}
	}
	return pts, colRange
}

// trajPlots builds the panels, plots[r][c], from the projected points. It
// also returns, for the legend, the last line drawn for each embedding (nil
// where none was) and the thumbnail of the t = 0 marker (nil if no panel has
// a point).
func trajPlots(spec TrajSpec, n, d int, xlab, ylab string, pts [][][]plotter.XYs, colRange [][2]span) (plots [][]*plot.Plot, lines []*plotter.Line, startThumb *plotter.Scatter) {
	ncol := len(spec.Cols)
	plots = make([][]*plot.Plot, len(spec.Data))
	lines = make([]*plotter.Line, n)
	for r := range spec.Data {
		plots[r] = make([]*plot.Plot, ncol)
		for c := range ncol {
			p := trajPanel(spec.Cols[c], xlab, ylab)
			if c == 0 {
				p.Y.Label.Text = spec.Rows[r] + "\n" + ylab
			}
			for i, xy := range pts[r][c] {
				if len(xy) == 0 {
					continue
				}
				lines[i] = addTrajectory(p, xy, trajColor(i, n))
				if startThumb == nil {
					startThumb = &plotter.Scatter{GlyphStyle: draw.GlyphStyle{
						Color: color.Gray{0x40}, Radius: vg.Points(3.2), Shape: draw.BoxGlyph{}}}
				}
			}
			if d == 1 && spec.Basis == nil { // (t, z): unrelated units
				setPadded(p, colRange[c])
			} else {
				setSquare(p, colRange[c])
			}
			plots[r][c] = p
		}
	}
	return plots, lines, startThumb
}

// trajPanel returns an empty trajectory panel with its title, axis labels,
// ticks and grid.
func trajPanel(title, xlab, ylab string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.X.Label.Text = xlab
	p.Y.Label.Text = ylab
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(11)
		ax.Tick.Label.Font.Size = vg.Points(9)
		ax.Tick.Marker = linTicks{}
	}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{0xe8}
	g.Horizontal.Color = color.Gray{0xe8}
	p.Add(g)
	return p
}

// trajColor is the colour of embedding i of n: the palette for n <= 10,
// evenly spaced hues otherwise.
func trajColor(i, n int) color.Color {
	if n <= len(palette) {
		return Palette(i)
	}
	return hue(i, n)
}

// addTrajectory adds the non-empty path xy to p in colour col: a polyline,
// small markers when it has at most trajMarkers points, and a larger square
// at its start. It returns the polyline.
func addTrajectory(p *plot.Plot, xy plotter.XYs, col color.Color) *plotter.Line {
	l := &plotter.Line{XYs: xy, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)}}
	p.Add(l)
	if len(xy) <= trajMarkers {
		p.Add(&plotter.Scatter{XYs: xy, GlyphStyle: draw.GlyphStyle{
			Color: col, Radius: vg.Points(1.4), Shape: draw.CircleGlyph{}}})
	}
	start := &plotter.Scatter{XYs: xy[:1], GlyphStyle: draw.GlyphStyle{
		Color: col, Radius: vg.Points(3.2), Shape: draw.BoxGlyph{}}}
	p.Add(start)
	return l
}

// trajLegend lists the t = 0 marker and up to maxLabels labelled embeddings
// (those drawn somewhere), then how many labels were left out.
func trajLegend(spec TrajSpec, n int, lines []*plotter.Line, startThumb *plotter.Scatter) []legendEntry {
	var entries []legendEntry
	if startThumb != nil {
		entries = append(entries, legendEntry{"t = 0", startThumb})
	}
	for i := 0; i < len(spec.Labels) && i < n && i < maxLabels; i++ {
		if lines[i] != nil {
			entries = append(entries, legendEntry{spec.Labels[i], lines[i]})
		}
	}
	if len(spec.Labels) > maxLabels && n > maxLabels {
		entries = append(entries, legendEntry{fmt.Sprintf("(+%d more)", min(len(spec.Labels), n)-maxLabels), &plotter.Line{}})
	}
	return entries
}

// setSquare sets both axes of p to equal spans centred on the data of rs.
func setSquare(p *plot.Plot, rs [2]span) {
	if rs[0].empty() || rs[1].empty() {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -1, 1, -1, 1
		return
	}
	half := 0.5 * math.Max(rs[0].hi-rs[0].lo, rs[1].hi-rs[1].lo) * 1.05
	if half == 0 {
		half = 1
	}
	for k, ax := range []*plot.Axis{&p.X, &p.Y} {
		mid := 0.5 * (rs[k].lo + rs[k].hi)
		ax.Min, ax.Max = mid-half, mid+half
	}
}

// setPadded sets each axis of p to the range of rs widened by 5% each side.
func setPadded(p *plot.Plot, rs [2]span) {
	for k, ax := range []*plot.Axis{&p.X, &p.Y} {
		r := rs[k]
		if r.empty() {
			r = span{-1, 1}
		}
		pad := 0.05 * (r.hi - r.lo)
		if pad == 0 {
			pad = 1
		}
		ax.Min, ax.Max = r.lo-pad, r.hi+pad
	}
}

// trajProjection returns the map from (t, z_{t,i}) to 2-d and the axis labels.
func trajProjection(spec TrajSpec, d int) (func(t int, z []float64) (float64, float64), string, string, error) {
	if d == 1 && spec.Basis == nil {
		return func(t int, z []float64) (float64, float64) { return float64(t), z[0] }, "t", "z", nil
	}
	var basis, mean []float64
	xlab, ylab := "x", "y"
	switch {
	case spec.Basis != nil:
		if len(spec.Basis) != 2*d {
			return nil, "", "", fmt.Errorf("basis has %d entries, want 2·D = %d", len(spec.Basis), 2*d)
		}
		basis, mean = spec.Basis, make([]float64, d)
	default:
		last := spec.Data[0][len(spec.Data[0])-1]
		var frac [2]float64
		basis, mean, frac = pca2(last.Z, d)
		xlab = fmt.Sprintf("PC1 (%.0f%%)", 100*frac[0])
		ylab = fmt.Sprintf("PC2 (%.0f%%)", 100*frac[1])
	}
	return func(_ int, z []float64) (float64, float64) {
		var x, y float64
		for k, v := range z {
			v -= mean[k]
			x += basis[k] * v
			y += basis[d+k] * v
		}
		return x, y
	}, xlab, ylab, nil
}

// pca2 returns the top two principal directions (2×D row-major) of the finite
// D-vectors in z, their mean, and the fraction of the variance each explains.
// Without spread (or D < 2) the directions are the first coordinate axes.
func pca2(z []float64, d int) (basis, mean []float64, frac [2]float64) {
	mean = make([]float64, d)
	basis = make([]float64, 2*d)
	basis[0] = 1
	if d > 1 {
		basis[d+1] = 1
	}
	m := 0
	for off := 0; off+d <= len(z); off += d {
		v := z[off : off+d]
		if !allFinite(v) {
			continue
		}
		for k, x := range v {
			mean[k] += x
		}
		m++
	}
	if m == 0 {
		return basis, mean, frac
	}
	for k := range mean {
		mean[k] /= float64(m)
	}
	cov := mat.NewSymDense(d, nil)
	for off := 0; off+d <= len(z); off += d {
		v := z[off : off+d]
		if !allFinite(v) {
			continue
		}
		for a := range d {
			for b := a; b < d; b++ {
				cov.SetSym(a, b, cov.At(a, b)+(v[a]-mean[a])*(v[b]-mean[b]))
			}
		}
	}
	var eig mat.EigenSym
	if d < 2 || !eig.Factorize(cov, true) {
		return basis, mean, frac
	}
	vals := eig.Values(nil) // ascending
	var total float64
	for _, v := range vals {
		total += math.Max(v, 0)
	}
	if !(total > 0) {
		return basis, mean, frac
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	for j := range 2 {
		col := d - 1 - j
		big := 0
		for k := range d {
			if math.Abs(vecs.At(k, col)) > math.Abs(vecs.At(big, col)) {
				big = k
			}
		}
		sign := 1.0
		if vecs.At(big, col) < 0 {
			sign = -1
		}
		for k := range d {
			basis[j*d+k] = sign * vecs.At(k, col)
		}
		frac[j] = math.Max(vals[col], 0) / total
	}
	return basis, mean, frac
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if !finite(x) {
			return false
		}
	}
	return true
}
