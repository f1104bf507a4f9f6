// Deterministic elementary functions: ports of Go's pure-Go math.Exp,
// math.Log, math.Log1p and math.Pow (src/math/exp.go, log.go, log1p.go,
// pow.go of Go 1.26) whose every product is rounded before it is added
// (float64(x*y) + z), so that no compiler can contract it into a fused
// multiply-add. The standard library's versions give different bits on
// different builds: on amd64 math.Exp is assembly that uses FMA when the CPU
// has it and math.Log is assembly, on arm64 both are other code, and the
// pure-Go functions (Log1p, Pow, and Log on arm64) are compiled with fusion
// under GOAMD64=v3 and on arm64. Goldstone's results must be the same bits
// on every machine, so every value that reaches a result uses these.
//
// The accuracy is that of the originals (below 1 ulp); exp_test.go checks
// them against the standard library and their bits against digests that
// every build must reproduce.
//
// The original code carries this notice:
//
//	Copyright 2009 The Go Authors. All rights reserved.
//	Use of this source code is governed by a BSD-style
//	license that can be found in the LICENSE file.
//
// and, from FreeBSD's /usr/src/lib/msun/src/e_exp.c, e_log.c and s_log1p.c:
//
//	Copyright (C) 2004 by Sun Microsystems, Inc. All rights reserved.
//	Permission to use, copy, modify, and distribute this
//	software is freely granted, provided that this notice
//	is preserved.
//
// Go's LICENSE (BSD 3-clause): Redistribution and use in source and binary
// forms, with or without modification, are permitted provided that the
// following conditions are met: redistributions of source code must retain
// the above copyright notice, this list of conditions and the following
// disclaimer; redistributions in binary form must reproduce the above
// copyright notice, this list of conditions and the following disclaimer in
// the documentation and/or other materials provided with the distribution;
// neither the name of Google LLC nor the names of its contributors may be
// used to endorse or promote products derived from this software without
// specific prior written permission. THIS SOFTWARE IS PROVIDED BY THE
// COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR IMPLIED
// WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF
// MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN
// NO EVENT SHALL THE COPYRIGHT OWNER OR CONTRIBUTORS BE LIABLE FOR ANY
// DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
// DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS
// OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION)
// HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT,
// STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN
// ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
// POSSIBILITY OF SUCH DAMAGE.

package optim

import "math"

const (
	ln2Hi = 6.93147180369123816490e-01 // 3fe62e42 fee00000
	ln2Lo = 1.90821492927058770002e-10 // 3dea39ef 35793c76
	log2e = 1.44269504088896338700e+00
)

// Exp returns e**x, the same bits on every build (see detmath.go):
// Go's pure-Go exp with every product rounded. Special cases as math.Exp.
func Exp(x float64) float64 {
	const (
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28) // 2**-28
	)
	switch {
	case x != x: // NaN
		return x
	case x > overflow: // handles +Inf
		return math.Inf(1)
	case x < underflow: // handles -Inf
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	// reduce; computed as r = hi - lo for extra precision.
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	return expmulti(hi, lo, k)
}

// expmulti returns e**r * 2**k where r = hi - lo and |r| <= ln(2)/2.
func expmulti(hi, lo float64, k int) float64 {
	const (
		p1 = 1.66666666666666657415e-01  // 0x3FC55555; 0x55555555
		p2 = -2.77777777770155933842e-03 // 0xBF66C16C; 0x16BEBD93
		p3 = 6.61375632143793436117e-05  // 0x3F11566A; 0xAF25DE2C
		p4 = -1.65339022054652515390e-06 // 0xBEBBBD41; 0xC5D26BF1
		p5 = 4.13813679705723846039e-08  // 0x3E663769; 0x72BEA4D0
	)
	r := hi - lo
	t := r * r
	c := r - float64(t*(p1+float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))))
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	return ldexp(y, k)
}

// ldexp returns y * 2**k like math.Ldexp; for the exponents where the
// product is a normal number it multiplies by the power of two directly
// (exact, so the same value), else it calls math.Ldexp.
func ldexp(y float64, k int) float64 {
	if -1021 <= k && k <= 1023 {
		return y * math.Float64frombits(uint64(k+1023)<<52)
	}
	return math.Ldexp(y, k)
}

// Log returns the natural logarithm of x, the same bits on every build
// (see detmath.go): Go's pure-Go log with every product rounded. Special
// cases as math.Log.
func Log(x float64) float64 {
	const (
		l1 = 6.666666666666735130e-01 // 3FE55555 55555593
		l2 = 3.999999999940941908e-01 // 3FD99999 9997FA04
		l3 = 2.857142874366239149e-01 // 3FD24924 94229359
		l4 = 2.222219843214978396e-01 // 3FCC71C5 1D8E78AF
		l5 = 1.818357216161805012e-01 // 3FC74664 96CB03DE
		l6 = 1.531383769920937332e-01 // 3FC39A09 D078C69F
		l7 = 1.479819860511658591e-01 // 3FC2F112 DF3E5244
	)
	switch {
	case x != x || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	// reduce
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	// compute
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	R := t1 + t2
	hfsq := float64(0.5 * f * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*ln2Lo))) - f)
}

// Log1p returns the natural logarithm of 1 plus x, accurate also when x is
// near zero, the same bits on every build (see detmath.go): Go's pure-Go
// log1p with every product rounded. Special cases as math.Log1p.
func Log1p(x float64) float64 {
	const (
		sqrt2M1     = 4.142135623730950488017e-01  // Sqrt(2)-1 = 0x3fda827999fcef34
		sqrt2HalfM1 = -2.928932188134524755992e-01 // Sqrt(2)/2-1 = 0xbfd2bec333018866
		small       = 1.0 / (1 << 29)              // 2**-29 = 0x3e20000000000000
		tiny        = 1.0 / (1 << 54)              // 2**-54
		two53       = 1 << 53                      // 2**53
		lp1         = 6.666666666666735130e-01     // 3FE5555555555593
		lp2         = 3.999999999940941908e-01     // 3FD999999997FA04
		lp3         = 2.857142874366239149e-01     // 3FD2492494229359
		lp4         = 2.222219843214978396e-01     // 3FCC71C51D8E78AF
		lp5         = 1.818357216161805012e-01     // 3FC7466496CB03DE
		lp6         = 1.531383769920937332e-01     // 3FC39A09D078C69F
		lp7         = 1.479819860511658591e-01     // 3FC2F112DF3E5244
	)
	switch {
	case x < -1 || x != x: // includes -Inf
		return math.NaN()
	case x == -1:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return math.Inf(1)
	}
	absx := math.Abs(x)
	var f float64
	var iu uint64
	k := 1
	if absx < sqrt2M1 { //  |x| < Sqrt(2)-1
		if absx < small { // |x| < 2**-29
			if absx < tiny { // |x| < 2**-54
				return x
			}
			return x - float64(x*x*0.5)
		}
		if x > sqrt2HalfM1 { // Sqrt(2)/2-1 < x
			// (Sqrt(2)/2-1) < x < (Sqrt(2)-1)
			k = 0
			f = x
			iu = 1
		}
	}
	var c float64
	if k != 0 {
		var u float64
		if absx < two53 { // 1<<53
			u = 1.0 + x
			iu = math.Float64bits(u)
			k = int((iu >> 52) - 1023)
			// correction term
			if k > 0 {
				c = 1.0 - (u - x)
			} else {
				c = x - (u - 1.0)
			}
			c /= u
		} else {
			u = x
			iu = math.Float64bits(u)
			k = int((iu >> 52) - 1023)
			c = 0
		}
		iu &= 0x000fffffffffffff
		if iu < 0x0006a09e667f3bcd { // mantissa of Sqrt(2)
			u = math.Float64frombits(iu | 0x3ff0000000000000) // normalize u
		} else {
			k++
			u = math.Float64frombits(iu | 0x3fe0000000000000) // normalize u/2
			iu = (0x0010000000000000 - iu) >> 2
		}
		f = u - 1.0 // Sqrt(2)/2 < u < Sqrt(2)
	}
	hfsq := float64(0.5 * f * f)
	var s, R, z float64
	if iu == 0 { // |f| < 2**-20
		if f == 0 {
			if k == 0 {
				return 0
			}
			c += float64(float64(k) * ln2Lo)
			return float64(float64(k)*ln2Hi) + c
		}
		R = float64(hfsq * (1.0 - float64(0.66666666666666666*f))) // avoid division
		if k == 0 {
			return f - R
		}
		return float64(float64(k)*ln2Hi) - ((R - (float64(float64(k)*ln2Lo) + c)) - f)
	}
	s = f / (2.0 + f)
	z = s * s
	R = float64(z * (lp1 + float64(z*(lp2+float64(z*(lp3+float64(z*(lp4+float64(z*(lp5+float64(z*(lp6+float64(z*lp7)))))))))))))
	if k == 0 {
		return f - (hfsq - float64(s*(hfsq+R)))
	}
	return float64(float64(k)*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + (float64(float64(k)*ln2Lo) + c))) - f)
}

// Pow returns x**y, the same bits on every build (see detmath.go): Go's
// pure-Go pow on Exp and Log above. Special cases as math.Pow.
func Pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case y == 1:
		return x
	case x != x || y != y:
		return math.NaN()
	case x == 0:
		switch {
		case y < 0:
			if math.Signbit(x) && isOddInt(y) {
				return math.Inf(-1)
			}
			return math.Inf(1)
		case y > 0:
			if math.Signbit(x) && isOddInt(y) {
				return x
			}
			return 0
		}
	case math.IsInf(y, 0):
		switch {
		case x == -1:
			return 1
		case (math.Abs(x) < 1) == math.IsInf(y, 1):
			return 0
		default:
			return math.Inf(1)
		}
	case math.IsInf(x, 0):
		if math.IsInf(x, -1) {
			return Pow(1/x, -y) // Pow(-0, -y)
		}
		switch {
		case y < 0:
			return 0
		case y > 0:
			return math.Inf(1)
		}
	case y == 0.5:
		return math.Sqrt(x)
	case y == -0.5:
		return 1 / math.Sqrt(x)
	}
	yi, yf := math.Modf(math.Abs(y))
	if yf != 0 && x < 0 {
		return math.NaN()
	}
	if yi >= 1<<63 {
		// yi is a large even int that will lead to overflow (or underflow to 0)
		// for all x except -1 (x == 1 was handled earlier)
		switch {
		case x == -1:
			return 1
		case (math.Abs(x) < 1) == (y > 0):
			return 0
		default:
			return math.Inf(1)
		}
	}
	// ans = a1 * 2**ae (= 1 for now).
	a1 := 1.0
	ae := 0
	// ans *= x**yf
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		a1 = Exp(yf * Log(x))
	}
	// ans *= x**yi
	//   by repeated squaring and multiplying by bits of yi.
	//   accumulate powers of two into exp.
	x1, xe := math.Frexp(x)
	for i := int64(yi); i != 0; i >>= 1 {
		if xe < -1<<12 || 1<<12 < xe {
			// catastrophic overflow - let Ldexp handle it.
			ae += xe
			break
		}
		if i&1 == 1 {
			a1 *= x1
			ae += xe
		}
		x1 = float64(x1 * x1)
		xe <<= 1
		if x1 < .5 {
			x1 += x1
			xe--
		}
	}
	// ans = a1 * 2**ae
	// if y < 0 { ans = 1 / ans }
	// but in the opposite order
	if y < 0 {
		a1 = 1 / a1
		ae = -ae
	}
	return math.Ldexp(a1, ae)
}

// isOddInt reports whether x is an odd integer.
func isOddInt(x float64) bool {
	if math.Abs(x) >= (1 << 53) {
		// 1 << 53 is the largest exact integer in the float64 format.
		// Any number outside this range will be truncated before the decimal point and therefore will always be
		// an even integer.
		return false
	}
	xi, xf := math.Modf(x)
	return xf == 0 && int64(xi)&1 == 1
}
