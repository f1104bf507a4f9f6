package models

// Small dense kernels of the hot loops. Four accumulators break the
// floating-point add dependency chain; the summation order is fixed, so the
// results do not depend on anything but the inputs.

// dot returns a . b; len(b) >= len(a).
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * b[j]
		s1 += a[j+1] * b[j+1]
		s2 += a[j+2] * b[j+2]
		s3 += a[j+3] * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy sets y += alpha x; len(y) >= len(x).
func axpy(y []float64, alpha float64, x []float64) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * v
	}
}

// scaleNorm sets dst = alpha z and returns ||z||^2; len(dst) >= len(z).
func scaleNorm(dst []float64, alpha float64, z []float64) float64 {
	dst = dst[:len(z)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(z); j += 4 {
		a0, a1, a2, a3 := z[j], z[j+1], z[j+2], z[j+3]
		s0 += a0 * a0
		s1 += a1 * a1
		s2 += a2 * a2
		s3 += a3 * a3
		dst[j], dst[j+1], dst[j+2], dst[j+3] = alpha*a0, alpha*a1, alpha*a2, alpha*a3
	}
	for ; j < len(z); j++ {
		s0 += z[j] * z[j]
		dst[j] = alpha * z[j]
	}
	return (s0 + s1) + (s2 + s3)
}
