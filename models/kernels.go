// Small dense kernels of the hot loops. Four accumulators break the
// floating-point add dependency chain; the summation order is fixed, so the
// results do not depend on anything but the inputs.

package models

import (
	"math"
	"unsafe"

	"goldstone/optim"
)

// as64 returns x as a []float64 when F is float64 (ok), for the FMA
// kernels, which exist for float64 only.
func as64[F optim.Float](x []F) (s []float64, ok bool) {
	var z F
	if unsafe.Sizeof(z) != 8 || len(x) == 0 {
		return nil, false
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&x[0])), len(x)), true
}

// as32 returns x as a []float32 when F is float32 (ok), for the float32
// FMA kernels.
func as32[F optim.Float](x []F) (s []float32, ok bool) {
	var z F
	if unsafe.Sizeof(z) != 4 || len(x) == 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), len(x)), true
}

// scaleNorm sets dst = alpha z and returns ||z||^2 (summed in float64);
// len(dst) >= len(z).
func scaleNorm[F optim.Float](dst []F, alpha F, z []F) float64 {
	dst = dst[:len(z)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(z); j += 4 {
		a0, a1, a2, a3 := z[j], z[j+1], z[j+2], z[j+3]
		w0, w1, w2, w3 := float64(a0), float64(a1), float64(a2), float64(a3)
		s0 += float64(w0 * w0)
		s1 += float64(w1 * w1)
		s2 += float64(w2 * w2)
		s3 += float64(w3 * w3)
		dst[j], dst[j+1], dst[j+2], dst[j+3] = alpha*a0, alpha*a1, alpha*a2, alpha*a3
	}
	for ; j < len(z); j++ {
		w := float64(z[j])
		s0 += float64(w * w)
		dst[j] = alpha * z[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// lmfDots sets sc[b] to the dot product of the user column us[b] and the
// item column is[b] (a negative entry e names column ^e) of the d-vectors
// in x, for b < len(us) <= len(sc): with FMA, in four lanes reduced as
// (l0+l2)+(l1+l3), then the d%4 tail entries one by one. lmfDotsFMA does the
// same operations four lanes at a time.
//
// With F = float32 the products and sums are those of the float64 values
// of the entries (each product is exact in float64).
func lmfDots[F optim.Float](x []F, us, is []int32, d int, sc []float64) {
	n := len(us)
	if n == 0 {
		return
	}
	is, sc = is[:n], sc[:n]
	if x64, ok := as64(x); ok && useFMA {
		lmfDotsFMA(&x64[0], &us[0], &is[0], n, d, &sc[0])
		return
	}
	if x32, ok := as32(x); ok && useFMA {
		lmfDots32FMA(&x32[0], &us[0], &is[0], n, d, &sc[0])
		return
	}
	lmfDotsGo(x, us, is, d, sc)
}

func lmfDotsGo[F optim.Float](x []F, us, is []int32, d int, sc []float64) {
	for b, u := range us {
		e := is[b]
		ou, ov := int(u)*d, int(e^(e>>31))*d
		a, v := x[ou:ou+d:ou+d], x[ov:ov+d:ov+d]
		var l0, l1, l2, l3 float64
		j := 0
		for ; j+4 <= d; j += 4 {
			l0 = math.FMA(float64(a[j]), float64(v[j]), l0)
			l1 = math.FMA(float64(a[j+1]), float64(v[j+1]), l1)
			l2 = math.FMA(float64(a[j+2]), float64(v[j+2]), l2)
			l3 = math.FMA(float64(a[j+3]), float64(v[j+3]), l3)
		}
		s := (l0 + l2) + (l1 + l3)
		for ; j < d; j++ {
			s = math.FMA(float64(a[j]), float64(v[j]), s)
		}
		sc[b] = s
	}
}

// lmfAxpys adds, for every rating b < len(us), cf[b] times the item vector to the user's column of g and cf[b] times the
// user vector to the item's column of g, entry by entry as
// FMA(cf[b], x, g) (columns as in lmfDots; a user and an item column never
// coincide). With F = float32 the FMA is taken in float64 and its result
// rounded to float32.
func lmfAxpys[F optim.Float](x, g []F, us, is []int32, d int, cf []float64) {
	n := len(us)
	if n == 0 {
		return
	}
	is, cf = is[:n], cf[:n]
	if x64, ok := as64(x); ok && useFMA {
		g64, _ := as64(g)
		lmfAxpysFMA(&x64[0], &g64[0], &us[0], &is[0], n, d, &cf[0])
		return
	}
	if x32, ok := as32(x); ok && useFMA {
		g32, _ := as32(g)
		lmfAxpys32FMA(&x32[0], &g32[0], &us[0], &is[0], n, d, &cf[0])
		return
	}
	lmfAxpysGo(x, g, us, is, d, cf)
}

func lmfAxpysGo[F optim.Float](x, g []F, us, is []int32, d int, cf []float64) {
	for b, u := range us {
		e := is[b]
		ou, ov := int(u)*d, int(e^(e>>31))*d
		xu, xv := x[ou:ou+d:ou+d], x[ov:ov+d:ov+d]
		gu, gv := g[ou:ou+d:ou+d], g[ov:ov+d:ov+d]
		c := cf[b]
		for j := range d {
			gu[j] = F(math.FMA(c, float64(xv[j]), float64(gu[j])))
		}
		for j := range d {
			gv[j] = F(math.FMA(c, float64(xu[j]), float64(gv[j])))
		}
	}
}
