package optim

import "unsafe"

// Float is the element type of a parameter vector, its gradient and the
// optimizer state: float64 (the default) or float32 (the float32 mode). The
// sums that decide a result (psi, ||Z||^2, losses) are accumulated in
// float64 for both.
type Float interface{ ~float32 | ~float64 }

// as64 returns x as a []float64 when F is 64 bits wide (float64), with ok;
// otherwise nil and false. The AVX kernels, which exist for float64 only,
// take it.
func as64[F Float](x []F) (s []float64, ok bool) {
	var z F
	if unsafe.Sizeof(z) != 8 {
		return nil, false
	}
	if len(x) == 0 {
		return []float64{}, true
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&x[0])), len(x)), true
}

// as32 returns x as a []float32 when F is 32 bits wide (float32), with ok.
func as32[F Float](x []F) (s []float32, ok bool) {
	var z F
	if unsafe.Sizeof(z) != 4 {
		return nil, false
	}
	if len(x) == 0 {
		return []float32{}, true
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), len(x)), true
}
