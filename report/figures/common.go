package figures

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"goldstone/internal/atomicfile"
)

// DPI is the resolution of every PNG written by this package.
const DPI = 110

// palette is the Tableau-10 palette: distinguishable, colour-blind tolerant
// and familiar from matplotlib.
var palette = [...]color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
	{0xbc, 0xbd, 0x22, 0xff}, // olive
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
}

// Palette returns colour i of the fixed palette (Tableau 10), cycling when i is
// past its end. Callers can pass Palette(k) as Series.Color to keep a method's
// colour identical across separate figures.
func Palette(i int) color.Color {
	n := len(palette)
	return palette[((i%n)+n)%n]
}

// hue returns the i-th of n evenly spaced, fully saturated, medium-dark hues;
// used when more distinct colours are needed than the palette holds.
func hue(i, n int) color.Color {
	h := float64(i) / float64(n) * 6
	sector := int(h)
	f := h - float64(sector)
	const v, lo = 0.85, 0.15
	q := v - (v-lo)*f
	t := lo + (v-lo)*f
	var r, g, b float64
	switch sector % 6 {
	case 0:
		r, g, b = v, t, lo
	case 1:
		r, g, b = q, v, lo
	case 2:
		r, g, b = lo, v, t
	case 3:
		r, g, b = lo, q, v
	case 4:
		r, g, b = t, lo, v
	default:
		r, g, b = v, lo, q
	}
	return color.RGBA{uint8(255 * r), uint8(255 * g), uint8(255 * b), 0xff}
}

// dashes is the dash pattern of Series with Dashed set.
var dashes = []vg.Length{vg.Points(6), vg.Points(3)}

// newCanvas returns an image canvas of the given size at DPI and a draw.Canvas
// over all of it.
func newCanvas(w, h vg.Length) (*vgimg.Canvas, draw.Canvas) {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
	return img, draw.New(img)
}

// textStyle returns the default plot text style at the given size in points.
func textStyle(size float64) text.Style {
	p := plot.New()
	sty := p.Title.TextStyle
	sty.Font.Size = vg.Points(size)
	return sty
}

// drawTitle writes title centred at the top of dc and returns dc without the
// space it took. An empty title takes no space.
func drawTitle(dc draw.Canvas, title string) draw.Canvas {
	if title == "" {
		return dc
	}
	sty := textStyle(14)
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YTop
	pad := vg.Points(6)
	dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - pad}, title)
	h := sty.Rectangle(title).Size().Y
	return draw.Crop(dc, 0, 0, 0, -(h + 2*pad))
}

// titleHeight is the height drawTitle takes for title.
func titleHeight(title string) vg.Length {
	if title == "" {
		return 0
	}
	return textStyle(14).Rectangle(title).Size().Y + 2*vg.Points(6)
}

// titleWidth is the width a figure needs for title not to be cut at its
// edges (drawTitle centres it).
func titleWidth(title string) vg.Length {
	if title == "" {
		return 0
	}
	return textStyle(14).Rectangle(title).Size().X + 4*vg.Points(6)
}

// legendEntry is one line of a side legend.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// sideLegend measures the legend made of entries: its width and height.
func sideLegend(entries []legendEntry) (l plot.Legend, w, h vg.Length) {
	l = plot.NewLegend()
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(24)
	l.TextStyle.Font.Size = vg.Points(11)
	l.Padding = vg.Points(4)
	em := l.TextStyle.Rectangle(" ").Max.X
	for _, e := range entries {
		l.Add(e.name, e.thumb)
		tw := l.TextStyle.Rectangle(e.name).Max.X
		w = max(w, l.ThumbnailWidth+em+tw)
	}
	if len(entries) > 0 {
		eh := l.TextStyle.Rectangle("Xg").Size().Y
		h = vg.Length(len(entries)) * (eh + l.Padding)
		w += 2*em + vg.Points(10)
	}
	return l, w, h
}

// savePNG encodes img as PNG into path atomically (internal/atomicfile).
func savePNG(path string, img *vgimg.Canvas) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: encode png: %w", path, err)
	}
	return nil
}

// SVGPath is the vector twin of a figure's PNG: the same name with .svg.
func SVGPath(png string) string { return strings.TrimSuffix(png, filepath.Ext(png)) + ".svg" }

// paintBoth paints a figure of size w x h twice: as a PNG at path (DPI) and
// as an SVG at SVGPath(path) (vector, for a paper), both written
// atomically, the SVG first, so that a PNG never lacks its twin.
func paintBoth(path string, w, h vg.Length, paint func(dc draw.Canvas)) error {
	svg := vgsvg.NewWith(vgsvg.UseWH(w, h))
	dc := draw.New(svg)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	paint(dc)
	spath := SVGPath(path)
	if err := atomicfile.Write(spath, func(w io.Writer) error {
		_, err := svg.WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("write %s: encode svg: %w", spath, err)
	}
	img, dc := newCanvas(w, h)
	paint(dc)
	return savePNG(path, img)
}

// note is a plotter that writes a grey message in the middle of the data area,
// used for panels with nothing to draw.
type note string

func (n note) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(11)
	sty.Color = color.Gray{0x80}
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, c.Center(), string(n))
}
