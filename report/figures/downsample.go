package figures

import (
	"math"
	"sort"
)

// maxDrawPoints is the number of points above which a series is thinned for
// drawing.
const maxDrawPoints = 2000

// downsample returns, in increasing order, the indices of the points of (x, y)
// to draw so that at most about maxPts points remain while the shape of the
// curve is kept. The index range is cut into maxPts/4 buckets, and of each
// bucket the first, last, lowest-y and highest-y points are kept; so the first
// and last points and the global minimum and maximum always survive. When x is
// nondecreasing the buckets are equally wide in x (in log10 x when logX, which
// then requires x[0] > 0), otherwise they hold equal numbers of points.
// All of x and y must be finite. It returns nil when no thinning is needed.
func downsample(x, y []float64, maxPts int, logX bool) []int {
	n := len(x)
	if len(y) != n {
		panic("figures: downsample: len(x) != len(y)")
	}
	if maxPts < 4 {
		maxPts = 4
	}
	if n <= maxPts {
		return nil
	}
	nb := maxPts / 4
	edges := make([]int, nb+1) // bucket b is [edges[b], edges[b+1])
	edges[nb] = n
	sorted := sort.Float64sAreSorted(x)
	tf := func(v float64) float64 { return v }
	if logX {
		tf = math.Log10
		sorted = sorted && x[0] > 0
	}
	if sorted && x[n-1] > x[0] {
		t0, t1 := tf(x[0]), tf(x[n-1])
		for b := 1; b < nb; b++ {
			cut := t0 + (t1-t0)*float64(b)/float64(nb)
			edges[b] = sort.Search(n, func(i int) bool { return tf(x[i]) >= cut })
		}
	} else {
		for b := 1; b < nb; b++ {
			edges[b] = b * n / nb
		}
	}
	idx := make([]int, 0, 4*nb)
	for b := range nb {
		lo, hi := edges[b], edges[b+1]
		if hi <= lo {
			continue
		}
		imin, imax := lo, lo
		for i := lo + 1; i < hi; i++ {
			if y[i] < y[imin] {
				imin = i
			}
			if y[i] > y[imax] {
				imax = i
			}
		}
		pick := [4]int{lo, imin, imax, hi - 1}
		sort.Ints(pick[:])
		for _, i := range pick {
			if len(idx) == 0 || idx[len(idx)-1] != i {
				idx = append(idx, i)
			}
		}
	}
	return idx
}
