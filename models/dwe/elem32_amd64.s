//go:build !purego

#include "textflag.h"

// elem32AVX512x16: sigSoftplus32 and elemRow32Go's negative terms (elem32.go)
// on 16 float32 scores at a time: the same IEEE float32 operations in the
// same order (VMULPS and VADDPS, no fused multiply-adds; VCVTTPS2DQ
// truncates as Go's int32 conversion does; the exact selections by mask),
// then the float64 weights, loss terms and dl/dx on the two halves widened
// (VCVTPS2PD, exact) and dl/dx rounded to float32 by VCVTPD2PS (round to
// nearest even, as Go's conversion): every result has elemRow32Go's bits.
// AVX-512 F only.
//
// Two passes over the chunk, as elemAVX512: e = e^-|x| for all its entries
// (into gs), then the rest, whose second pass also adds the first nsum
// groups' loss terms to loss one by one in column order (a serial chain of
// additions that runs beside the vector work; read back from lt, which on
// the development VM ran faster than taking the lanes out of the
// registers: 142-150 against 103-120 GFLOP/s in TileProducts' f32_elem).
//
// func elem32AVX512x16(x *float32, b, lt *float64, gs *float32, n int, ai, scale, loss float64, nsum int) (float64, bool)
// For j < 16*(n/16), with xv = x[j] and w = ai*b[j]:
//   lt[j] = w * float64(softplus32(xv)), gs[j] = float32((w * float64(sig32(xv))) * scale),
// and it returns loss + lt[0] + lt[1] + ... + lt[16 nsum - 1] (in that
// order; nsum <= n/16). For j < 16 nsum, gs[j] goes to x[j] instead (the
// caller's dl/dx in place). It returns false, with x unchanged (and lt and
// gs not to be used), when some x[j] is NaN.
TEXT ·elem32AVX512x16(SB), NOSPLIT, $0-81
	MOVQ x+0(FP), SI
	MOVQ gs+24(FP), R8
	MOVQ n+32(FP), CX
	KXORW K6, K6, K6          // the NaN lanes so far
	SHRQ $4, CX
	JZ done
	MOVQ CX, BX
	VMOVUPS dwe32_one<>(SB), Z26
	VMOVUPS dwe32_half<>(SB), Z27
	VMOVUPS dwe32_two<>(SB), Z28
	VMOVDQU32 dwe32_i127<>(SB), Z29

passA:
	VMOVUPS (SI), Z0                       // xv
	VPANDD dwe32_absmask<>(SB), Z0, Z1     // a = |xv|
	VCMPPS $3, Z1, Z1, K1                  // unordered: NaN
	KORW K1, K6, K6
	VMINPS dwe32_amax<>(SB), Z1, Z1        // a < 104 ? a : 104
	VMULPS dwe32_log2e<>(SB), Z1, Z2
	VADDPS Z27, Z2, Z2
	VCVTTPS2DQ Z2, Z2                      // n = floor(a*log2e + 0.5)
	VCVTDQ2PS Z2, Z3                       // nf
	VMULPS dwe32_c1<>(SB), Z3, Z4
	VSUBPS Z1, Z4, Z4                      // nf*C1 - a
	VMULPS dwe32_c2<>(SB), Z3, Z5
	VADDPS Z5, Z4, Z4                      // r
	VMULPS Z4, Z4, Z5                      // z = r*r
	VMULPS dwe32_e5<>(SB), Z4, Z6
	VADDPS dwe32_e4<>(SB), Z6, Z6
	VMULPS Z4, Z6, Z6
	VADDPS dwe32_e3<>(SB), Z6, Z6
	VMULPS Z4, Z6, Z6
	VADDPS dwe32_e2<>(SB), Z6, Z6
	VMULPS Z4, Z6, Z6
	VADDPS dwe32_e1<>(SB), Z6, Z6
	VMULPS Z4, Z6, Z6
	VADDPS dwe32_e0<>(SB), Z6, Z6          // p
	VMULPS Z5, Z6, Z6
	VADDPS Z4, Z6, Z6                      // p*z + r
	VADDPS Z26, Z6, Z6                     // y
	VPSRLD $1, Z2, Z7                      // n1 = n >> 1
	VPSUBD Z7, Z2, Z8                      // n2 = n - n1
	VPSUBD Z7, Z29, Z7
	VPSLLD $23, Z7, Z7                     // 2^-n1
	VPSUBD Z8, Z29, Z8
	VPSLLD $23, Z8, Z8                     // 2^-n2
	VMULPS Z7, Z6, Z6
	VMULPS Z8, Z6, Z6                      // e = e^-a
	VMOVUPS Z6, (R8)                       // e, in gs until pass B
	ADDQ $64, SI
	ADDQ $64, R8
	DECQ CX
	JNZ passA
	KORTESTW K6, K6
	JNE done                               // a NaN: nothing written but gs

	MOVQ x+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ lt+16(FP), DI
	MOVQ gs+24(FP), R8
	MOVQ nsum+64(FP), R9
	VMOVSD loss+56(FP), X15
	VBROADCASTSD ai+40(FP), Z18
	VBROADCASTSD scale+48(FP), Z19
	VPXORD Z12, Z12, Z12                   // 0

passB:
	VMOVUPS (SI), Z0                       // xv
	VMOVUPS (R8), Z4                       // e
	// log(1+e), 1/(1+e)
	VADDPS Z26, Z4, Z6                     // y = 1 + e
	VCMPPS $13, dwe32_sqrt2<>(SB), Z6, K2  // y >= sqrt2
	VMOVAPS Z26, Z8
	VMOVAPS Z27, K2, Z8                    // m: 0.5 where y >= sqrt2, else 1
	VMOVUPS.Z dwe32_ln2hi<>(SB), K2, Z7    // kl*ln2hi (exact: ln2hi or +0)
	VMOVUPS.Z dwe32_ln2lo<>(SB), K2, Z16   // kl*ln2lo
	VMULPS Z8, Z6, Z8
	VSUBPS Z26, Z8, Z8                     // f = y*m - 1
	VADDPS Z28, Z8, Z9                     // d = 2 + f
	VMULPS Z9, Z6, Z10                     // y*d
	VDIVPS Z10, Z26, Z10                   // q = 1/(y*d)
	VMULPS Z10, Z9, Z9                     // inv = d*q
	VMULPS Z10, Z6, Z10
	VMULPS Z10, Z8, Z10                    // s = f*(y*q)
	VMULPS Z10, Z10, Z11                   // z = s*s
	VMULPS Z11, Z11, Z1                    // w = z*z
	VMULPS dwe32_lg4<>(SB), Z1, Z13
	VADDPS dwe32_lg2<>(SB), Z13, Z13
	VMULPS Z13, Z1, Z13                    // t1 = w*(w*lg4 + lg2)
	VMULPS dwe32_lg3<>(SB), Z1, Z14
	VADDPS dwe32_lg1<>(SB), Z14, Z14
	VMULPS Z14, Z11, Z14                   // t2 = z*(w*lg3 + lg1)
	VADDPS Z13, Z14, Z13                   // r = t2 + t1
	VMULPS Z27, Z8, Z14
	VMULPS Z8, Z14, Z14                    // hfsq = (0.5*f)*f
	VADDPS Z13, Z14, Z13                   // hfsq + r
	VMULPS Z13, Z10, Z13                   // s*(hfsq+r)
	VADDPS Z16, Z13, Z13                   // + kl*ln2lo
	VSUBPS Z13, Z14, Z13                   // hfsq - (...)
	VSUBPS Z8, Z13, Z13                    // (...) - f
	VSUBPS Z13, Z7, Z13                    // kl*ln2hi - (...)
	VSUBPS Z26, Z6, Z11                    // y - 1
	VSUBPS Z11, Z4, Z11                    // e - (y-1)
	VMULPS Z9, Z11, Z11
	VADDPS Z11, Z13, Z13                   // l1 = log(1+e)
	VMULPS Z9, Z4, Z4                      // ei = e*inv
	// sig(x), softplus(x)
	VCMPPS $13, Z12, Z0, K3                // xv >= 0
	VMOVAPS Z9, K3, Z4                     // sig: inv where xv >= 0, else ei
	VMAXPS Z12, Z0, Z0                     // xv > 0 ? xv : 0
	VADDPS Z0, Z13, Z13                    // spp = l1 + max(xv, 0)
	// float64: lt = w*spp, gs = float32((w*sig)*scale)
	VMULPD (DX), Z18, Z20                  // w, entries 0-7
	VMULPD 64(DX), Z18, Z21                // w, entries 8-15
	VCVTPS2PD Y13, Z0
	VEXTRACTF64X4 $1, Z13, Y1
	VCVTPS2PD Y1, Z1
	VMULPD Z0, Z20, Z0                     // lt, entries 0-7
	VMULPD Z1, Z21, Z1                     // lt, entries 8-15
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VCVTPS2PD Y4, Z24
	VEXTRACTF64X4 $1, Z4, Y2
	VCVTPS2PD Y2, Z25
	VMULPD Z24, Z20, Z24
	VMULPD Z19, Z24, Z24
	VMULPD Z25, Z21, Z25
	VMULPD Z19, Z25, Z25
	VCVTPD2PS Z24, Y3
	VCVTPD2PS Z25, Y5
	MOVQ R8, R10
	TESTQ R9, R9
	CMOVQNE SI, R10                        // the summed groups' dl/dx in place
	VMOVUPS Y3, (R10)
	VMOVUPS Y5, 32(R10)

	TESTQ R9, R9
	JZ nosum
	VADDSD 0(DI), X15, X15
	VADDSD 8(DI), X15, X15
	VADDSD 16(DI), X15, X15
	VADDSD 24(DI), X15, X15
	VADDSD 32(DI), X15, X15
	VADDSD 40(DI), X15, X15
	VADDSD 48(DI), X15, X15
	VADDSD 56(DI), X15, X15
	VADDSD 64(DI), X15, X15
	VADDSD 72(DI), X15, X15
	VADDSD 80(DI), X15, X15
	VADDSD 88(DI), X15, X15
	VADDSD 96(DI), X15, X15
	VADDSD 104(DI), X15, X15
	VADDSD 112(DI), X15, X15
	VADDSD 120(DI), X15, X15
	DECQ R9

nosum:
	ADDQ $64, SI
	ADDQ $128, DX
	ADDQ $128, DI
	ADDQ $64, R8
	DECQ BX
	JNZ passB
	VMOVSD X15, ret+72(FP)

done:
	KORTESTW K6, K6
	SETEQ ret1+80(FP)
	VZEROUPPER
	RET

// elem32AVX2x8 is elem32AVX512x16 (elem32_amd64.s) on 8 entries at a time
// with AVX2: the same IEEE float32 and float64 operations in the same
// order (the selections by masks ANDed in: kl*ln2hi as ln2hi or +0, sig
// as inv or e*inv), so every result has elemRow32Go's bits. The constants
// are the first 32 bytes of the dwe32_* tables.
//
// func elem32AVX2x8(x *float32, b, lt *float64, gs *float32, n int, ai, scale, loss float64, nsum int) (float64, bool)
// As elem32AVX512x16 with groups of 8: for j < 8*(n/8), lt[j] and gs[j]
// (x[j] in place for j < 8 nsum), and loss + lt[0] + ... + lt[8 nsum - 1];
// false, with x unchanged, when some x[j] is NaN.

TEXT ·elem32AVX2x8(SB), NOSPLIT, $0-81
	MOVQ x+0(FP), SI
	MOVQ gs+24(FP), R8
	MOVQ n+32(FP), CX
	VXORPS Y15, Y15, Y15      // the NaN lanes so far
	SHRQ $3, CX
	JZ nan
	MOVQ CX, BX

passA:
	VMOVUPS (SI), Y0                       // xv
	VANDPS dwe32_absmask<>(SB), Y0, Y1     // a = |xv|
	VCMPPS $3, Y1, Y1, Y2                  // unordered: NaN
	VORPS Y2, Y15, Y15
	VMINPS dwe32_amax<>(SB), Y1, Y1        // a < 104 ? a : 104
	VMULPS dwe32_log2e<>(SB), Y1, Y2
	VADDPS dwe32_half<>(SB), Y2, Y2
	VCVTTPS2DQ Y2, Y2                      // n = floor(a*log2e + 0.5)
	VCVTDQ2PS Y2, Y3                       // nf
	VMULPS dwe32_c1<>(SB), Y3, Y4
	VSUBPS Y1, Y4, Y4                      // nf*C1 - a
	VMULPS dwe32_c2<>(SB), Y3, Y5
	VADDPS Y5, Y4, Y4                      // r
	VMULPS Y4, Y4, Y5                      // z = r*r
	VMULPS dwe32_e5<>(SB), Y4, Y6
	VADDPS dwe32_e4<>(SB), Y6, Y6
	VMULPS Y4, Y6, Y6
	VADDPS dwe32_e3<>(SB), Y6, Y6
	VMULPS Y4, Y6, Y6
	VADDPS dwe32_e2<>(SB), Y6, Y6
	VMULPS Y4, Y6, Y6
	VADDPS dwe32_e1<>(SB), Y6, Y6
	VMULPS Y4, Y6, Y6
	VADDPS dwe32_e0<>(SB), Y6, Y6          // p
	VMULPS Y5, Y6, Y6
	VADDPS Y4, Y6, Y6                      // p*z + r
	VADDPS dwe32_one<>(SB), Y6, Y6         // y
	VPSRLD $1, Y2, Y7                      // n1 = n >> 1
	VPSUBD Y7, Y2, Y8                      // n2 = n - n1
	VMOVDQU dwe32_i127<>(SB), Y9
	VPSUBD Y7, Y9, Y7
	VPSLLD $23, Y7, Y7                     // 2^-n1
	VPSUBD Y8, Y9, Y8
	VPSLLD $23, Y8, Y8                     // 2^-n2
	VMULPS Y7, Y6, Y6
	VMULPS Y8, Y6, Y6                      // e = e^-a
	VMOVUPS Y6, (R8)                       // e, in gs until pass B
	ADDQ $32, SI
	ADDQ $32, R8
	DECQ CX
	JNZ passA
	VPTEST Y15, Y15
	JNE nan                                // a NaN: nothing written but gs

	MOVQ x+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ lt+16(FP), DI
	MOVQ gs+24(FP), R8
	MOVQ nsum+64(FP), R9
	VMOVSD loss+56(FP), X15

passB:
	VMOVUPS (SI), Y0                       // xv
	VMOVUPS (R8), Y4                       // e
	// log(1+e), 1/(1+e)
	VADDPS dwe32_one<>(SB), Y4, Y6         // y = 1 + e
	VCMPPS $13, dwe32_sqrt2<>(SB), Y6, Y2  // y >= sqrt2
	VANDPS dwe32_ln2hi<>(SB), Y2, Y7       // kl*ln2hi (exact: ln2hi or +0)
	VANDPS dwe32_ln2lo<>(SB), Y2, Y3       // kl*ln2lo
	VANDPS dwe32_half<>(SB), Y2, Y5
	VMOVUPS dwe32_one<>(SB), Y8
	VSUBPS Y5, Y8, Y8                      // m = 1 - 0.5*kl (exact)
	VMULPS Y8, Y6, Y8
	VSUBPS dwe32_one<>(SB), Y8, Y8         // f = y*m - 1
	VADDPS dwe32_two<>(SB), Y8, Y9         // d = 2 + f
	VMULPS Y9, Y6, Y10                     // y*d
	VMOVUPS dwe32_one<>(SB), Y11
	VDIVPS Y10, Y11, Y10                   // q = 1/(y*d)
	VMULPS Y10, Y9, Y9                     // inv = d*q
	VMULPS Y10, Y6, Y10
	VMULPS Y10, Y8, Y10                    // s = f*(y*q)
	VMULPS Y10, Y10, Y11                   // z = s*s
	VMULPS Y11, Y11, Y1                    // w = z*z
	VMULPS dwe32_lg4<>(SB), Y1, Y13
	VADDPS dwe32_lg2<>(SB), Y13, Y13
	VMULPS Y13, Y1, Y13                    // t1 = w*(w*lg4 + lg2)
	VMULPS dwe32_lg3<>(SB), Y1, Y14
	VADDPS dwe32_lg1<>(SB), Y14, Y14
	VMULPS Y14, Y11, Y14                   // t2 = z*(w*lg3 + lg1)
	VADDPS Y13, Y14, Y13                   // r = t2 + t1
	VMULPS dwe32_half<>(SB), Y8, Y14
	VMULPS Y8, Y14, Y14                    // hfsq = (0.5*f)*f
	VADDPS Y13, Y14, Y13                   // hfsq + r
	VMULPS Y13, Y10, Y13                   // s*(hfsq+r)
	VADDPS Y3, Y13, Y13                    // + kl*ln2lo
	VSUBPS Y13, Y14, Y13                   // hfsq - (...)
	VSUBPS Y8, Y13, Y13                    // (...) - f
	VSUBPS Y13, Y7, Y13                    // kl*ln2hi - (...)
	VSUBPS dwe32_one<>(SB), Y6, Y11        // y - 1
	VSUBPS Y11, Y4, Y11                    // e - (y-1)
	VMULPS Y9, Y11, Y11
	VADDPS Y11, Y13, Y13                   // l1 = log(1+e)
	VMULPS Y9, Y4, Y4                      // ei = e*inv
	// sig(x), softplus(x)
	VXORPS Y12, Y12, Y12
	VCMPPS $13, Y12, Y0, Y2                // xv >= 0
	VANDPS Y2, Y9, Y5                      // inv where xv >= 0
	VANDNPS Y4, Y2, Y4                     // ei elsewhere
	VORPS Y5, Y4, Y4                       // sig
	VMAXPS Y12, Y0, Y0                     // xv > 0 ? xv : 0
	VADDPS Y0, Y13, Y13                    // spp = l1 + max(xv, 0)
	// float64: lt = w*spp, gs = float32((w*sig)*scale)
	VBROADCASTSD ai+40(FP), Y5
	VMULPD (DX), Y5, Y0                    // w, entries 0-3
	VMULPD 32(DX), Y5, Y1                  // w, entries 4-7
	VCVTPS2PD X13, Y2
	VEXTRACTF128 $1, Y13, X3
	VCVTPS2PD X3, Y3
	VMULPD Y2, Y0, Y2                      // lt, entries 0-3
	VMULPD Y3, Y1, Y3                      // lt, entries 4-7
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, 32(DI)
	VCVTPS2PD X4, Y6
	VEXTRACTF128 $1, Y4, X7
	VCVTPS2PD X7, Y7
	VMULPD Y6, Y0, Y6
	VMULPD Y7, Y1, Y7
	VBROADCASTSD scale+48(FP), Y5
	VMULPD Y5, Y6, Y6
	VMULPD Y5, Y7, Y7
	VCVTPD2PSY Y6, X6
	VCVTPD2PSY Y7, X7
	MOVQ R8, R10
	TESTQ R9, R9
	CMOVQNE SI, R10                        // the summed groups' dl/dx in place
	VMOVUPS X6, (R10)
	VMOVUPS X7, 16(R10)

	TESTQ R9, R9
	JZ nosum
	VADDSD 0(DI), X15, X15
	VADDSD 8(DI), X15, X15
	VADDSD 16(DI), X15, X15
	VADDSD 24(DI), X15, X15
	VADDSD 32(DI), X15, X15
	VADDSD 40(DI), X15, X15
	VADDSD 48(DI), X15, X15
	VADDSD 56(DI), X15, X15
	DECQ R9

nosum:
	ADDQ $32, SI
	ADDQ $64, DX
	ADDQ $64, DI
	ADDQ $32, R8
	DECQ BX
	JNZ passB
	VMOVSD X15, ret+72(FP)
	MOVB $1, ret1+80(FP)
	VZEROUPPER
	RET

nan:
	MOVB $0, ret1+80(FP)
	VZEROUPPER
	RET

DATA dwe32_amax<>+0(SB)/8, $0x42d0000042d00000
DATA dwe32_amax<>+8(SB)/8, $0x42d0000042d00000
DATA dwe32_amax<>+16(SB)/8, $0x42d0000042d00000
DATA dwe32_amax<>+24(SB)/8, $0x42d0000042d00000
DATA dwe32_amax<>+32(SB)/8, $0x42d0000042d00000
DATA dwe32_amax<>+40(SB)/8, $0x42d0000042d00000
DATA dwe32_amax<>+48(SB)/8, $0x42d0000042d00000
DATA dwe32_amax<>+56(SB)/8, $0x42d0000042d00000
GLOBL dwe32_amax<>(SB), RODATA|NOPTR, $64
DATA dwe32_absmask<>+0(SB)/8, $0x7fffffff7fffffff
DATA dwe32_absmask<>+8(SB)/8, $0x7fffffff7fffffff
DATA dwe32_absmask<>+16(SB)/8, $0x7fffffff7fffffff
DATA dwe32_absmask<>+24(SB)/8, $0x7fffffff7fffffff
DATA dwe32_absmask<>+32(SB)/8, $0x7fffffff7fffffff
DATA dwe32_absmask<>+40(SB)/8, $0x7fffffff7fffffff
DATA dwe32_absmask<>+48(SB)/8, $0x7fffffff7fffffff
DATA dwe32_absmask<>+56(SB)/8, $0x7fffffff7fffffff
GLOBL dwe32_absmask<>(SB), RODATA|NOPTR, $64
DATA dwe32_log2e<>+0(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA dwe32_log2e<>+8(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA dwe32_log2e<>+16(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA dwe32_log2e<>+24(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA dwe32_log2e<>+32(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA dwe32_log2e<>+40(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA dwe32_log2e<>+48(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA dwe32_log2e<>+56(SB)/8, $0x3fb8aa3b3fb8aa3b
GLOBL dwe32_log2e<>(SB), RODATA|NOPTR, $64
DATA dwe32_c1<>+0(SB)/8, $0x3f3180003f318000
DATA dwe32_c1<>+8(SB)/8, $0x3f3180003f318000
DATA dwe32_c1<>+16(SB)/8, $0x3f3180003f318000
DATA dwe32_c1<>+24(SB)/8, $0x3f3180003f318000
DATA dwe32_c1<>+32(SB)/8, $0x3f3180003f318000
DATA dwe32_c1<>+40(SB)/8, $0x3f3180003f318000
DATA dwe32_c1<>+48(SB)/8, $0x3f3180003f318000
DATA dwe32_c1<>+56(SB)/8, $0x3f3180003f318000
GLOBL dwe32_c1<>(SB), RODATA|NOPTR, $64
DATA dwe32_c2<>+0(SB)/8, $0xb95e8083b95e8083
DATA dwe32_c2<>+8(SB)/8, $0xb95e8083b95e8083
DATA dwe32_c2<>+16(SB)/8, $0xb95e8083b95e8083
DATA dwe32_c2<>+24(SB)/8, $0xb95e8083b95e8083
DATA dwe32_c2<>+32(SB)/8, $0xb95e8083b95e8083
DATA dwe32_c2<>+40(SB)/8, $0xb95e8083b95e8083
DATA dwe32_c2<>+48(SB)/8, $0xb95e8083b95e8083
DATA dwe32_c2<>+56(SB)/8, $0xb95e8083b95e8083
GLOBL dwe32_c2<>(SB), RODATA|NOPTR, $64
DATA dwe32_e5<>+0(SB)/8, $0x3950696739506967
DATA dwe32_e5<>+8(SB)/8, $0x3950696739506967
DATA dwe32_e5<>+16(SB)/8, $0x3950696739506967
DATA dwe32_e5<>+24(SB)/8, $0x3950696739506967
DATA dwe32_e5<>+32(SB)/8, $0x3950696739506967
DATA dwe32_e5<>+40(SB)/8, $0x3950696739506967
DATA dwe32_e5<>+48(SB)/8, $0x3950696739506967
DATA dwe32_e5<>+56(SB)/8, $0x3950696739506967
GLOBL dwe32_e5<>(SB), RODATA|NOPTR, $64
DATA dwe32_e4<>+0(SB)/8, $0x3ab743ce3ab743ce
DATA dwe32_e4<>+8(SB)/8, $0x3ab743ce3ab743ce
DATA dwe32_e4<>+16(SB)/8, $0x3ab743ce3ab743ce
DATA dwe32_e4<>+24(SB)/8, $0x3ab743ce3ab743ce
DATA dwe32_e4<>+32(SB)/8, $0x3ab743ce3ab743ce
DATA dwe32_e4<>+40(SB)/8, $0x3ab743ce3ab743ce
DATA dwe32_e4<>+48(SB)/8, $0x3ab743ce3ab743ce
DATA dwe32_e4<>+56(SB)/8, $0x3ab743ce3ab743ce
GLOBL dwe32_e4<>(SB), RODATA|NOPTR, $64
DATA dwe32_e3<>+0(SB)/8, $0x3c0889083c088908
DATA dwe32_e3<>+8(SB)/8, $0x3c0889083c088908
DATA dwe32_e3<>+16(SB)/8, $0x3c0889083c088908
DATA dwe32_e3<>+24(SB)/8, $0x3c0889083c088908
DATA dwe32_e3<>+32(SB)/8, $0x3c0889083c088908
DATA dwe32_e3<>+40(SB)/8, $0x3c0889083c088908
DATA dwe32_e3<>+48(SB)/8, $0x3c0889083c088908
DATA dwe32_e3<>+56(SB)/8, $0x3c0889083c088908
GLOBL dwe32_e3<>(SB), RODATA|NOPTR, $64
DATA dwe32_e2<>+0(SB)/8, $0x3d2aa9c13d2aa9c1
DATA dwe32_e2<>+8(SB)/8, $0x3d2aa9c13d2aa9c1
DATA dwe32_e2<>+16(SB)/8, $0x3d2aa9c13d2aa9c1
DATA dwe32_e2<>+24(SB)/8, $0x3d2aa9c13d2aa9c1
DATA dwe32_e2<>+32(SB)/8, $0x3d2aa9c13d2aa9c1
DATA dwe32_e2<>+40(SB)/8, $0x3d2aa9c13d2aa9c1
DATA dwe32_e2<>+48(SB)/8, $0x3d2aa9c13d2aa9c1
DATA dwe32_e2<>+56(SB)/8, $0x3d2aa9c13d2aa9c1
GLOBL dwe32_e2<>(SB), RODATA|NOPTR, $64
DATA dwe32_e1<>+0(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA dwe32_e1<>+8(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA dwe32_e1<>+16(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA dwe32_e1<>+24(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA dwe32_e1<>+32(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA dwe32_e1<>+40(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA dwe32_e1<>+48(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA dwe32_e1<>+56(SB)/8, $0x3e2aaaaa3e2aaaaa
GLOBL dwe32_e1<>(SB), RODATA|NOPTR, $64
DATA dwe32_e0<>+0(SB)/8, $0x3f0000003f000000
DATA dwe32_e0<>+8(SB)/8, $0x3f0000003f000000
DATA dwe32_e0<>+16(SB)/8, $0x3f0000003f000000
DATA dwe32_e0<>+24(SB)/8, $0x3f0000003f000000
DATA dwe32_e0<>+32(SB)/8, $0x3f0000003f000000
DATA dwe32_e0<>+40(SB)/8, $0x3f0000003f000000
DATA dwe32_e0<>+48(SB)/8, $0x3f0000003f000000
DATA dwe32_e0<>+56(SB)/8, $0x3f0000003f000000
GLOBL dwe32_e0<>(SB), RODATA|NOPTR, $64
DATA dwe32_sqrt2<>+0(SB)/8, $0x3fb504f33fb504f3
DATA dwe32_sqrt2<>+8(SB)/8, $0x3fb504f33fb504f3
DATA dwe32_sqrt2<>+16(SB)/8, $0x3fb504f33fb504f3
DATA dwe32_sqrt2<>+24(SB)/8, $0x3fb504f33fb504f3
DATA dwe32_sqrt2<>+32(SB)/8, $0x3fb504f33fb504f3
DATA dwe32_sqrt2<>+40(SB)/8, $0x3fb504f33fb504f3
DATA dwe32_sqrt2<>+48(SB)/8, $0x3fb504f33fb504f3
DATA dwe32_sqrt2<>+56(SB)/8, $0x3fb504f33fb504f3
GLOBL dwe32_sqrt2<>(SB), RODATA|NOPTR, $64
DATA dwe32_lg1<>+0(SB)/8, $0x3f2aaaaa3f2aaaaa
DATA dwe32_lg1<>+8(SB)/8, $0x3f2aaaaa3f2aaaaa
DATA dwe32_lg1<>+16(SB)/8, $0x3f2aaaaa3f2aaaaa
DATA dwe32_lg1<>+24(SB)/8, $0x3f2aaaaa3f2aaaaa
DATA dwe32_lg1<>+32(SB)/8, $0x3f2aaaaa3f2aaaaa
DATA dwe32_lg1<>+40(SB)/8, $0x3f2aaaaa3f2aaaaa
DATA dwe32_lg1<>+48(SB)/8, $0x3f2aaaaa3f2aaaaa
DATA dwe32_lg1<>+56(SB)/8, $0x3f2aaaaa3f2aaaaa
GLOBL dwe32_lg1<>(SB), RODATA|NOPTR, $64
DATA dwe32_lg2<>+0(SB)/8, $0x3eccce133eccce13
DATA dwe32_lg2<>+8(SB)/8, $0x3eccce133eccce13
DATA dwe32_lg2<>+16(SB)/8, $0x3eccce133eccce13
DATA dwe32_lg2<>+24(SB)/8, $0x3eccce133eccce13
DATA dwe32_lg2<>+32(SB)/8, $0x3eccce133eccce13
DATA dwe32_lg2<>+40(SB)/8, $0x3eccce133eccce13
DATA dwe32_lg2<>+48(SB)/8, $0x3eccce133eccce13
DATA dwe32_lg2<>+56(SB)/8, $0x3eccce133eccce13
GLOBL dwe32_lg2<>(SB), RODATA|NOPTR, $64
DATA dwe32_lg3<>+0(SB)/8, $0x3e91e9ee3e91e9ee
DATA dwe32_lg3<>+8(SB)/8, $0x3e91e9ee3e91e9ee
DATA dwe32_lg3<>+16(SB)/8, $0x3e91e9ee3e91e9ee
DATA dwe32_lg3<>+24(SB)/8, $0x3e91e9ee3e91e9ee
DATA dwe32_lg3<>+32(SB)/8, $0x3e91e9ee3e91e9ee
DATA dwe32_lg3<>+40(SB)/8, $0x3e91e9ee3e91e9ee
DATA dwe32_lg3<>+48(SB)/8, $0x3e91e9ee3e91e9ee
DATA dwe32_lg3<>+56(SB)/8, $0x3e91e9ee3e91e9ee
GLOBL dwe32_lg3<>(SB), RODATA|NOPTR, $64
DATA dwe32_lg4<>+0(SB)/8, $0x3e789e263e789e26
DATA dwe32_lg4<>+8(SB)/8, $0x3e789e263e789e26
DATA dwe32_lg4<>+16(SB)/8, $0x3e789e263e789e26
DATA dwe32_lg4<>+24(SB)/8, $0x3e789e263e789e26
DATA dwe32_lg4<>+32(SB)/8, $0x3e789e263e789e26
DATA dwe32_lg4<>+40(SB)/8, $0x3e789e263e789e26
DATA dwe32_lg4<>+48(SB)/8, $0x3e789e263e789e26
DATA dwe32_lg4<>+56(SB)/8, $0x3e789e263e789e26
GLOBL dwe32_lg4<>(SB), RODATA|NOPTR, $64
DATA dwe32_ln2hi<>+0(SB)/8, $0x3f3171803f317180
DATA dwe32_ln2hi<>+8(SB)/8, $0x3f3171803f317180
DATA dwe32_ln2hi<>+16(SB)/8, $0x3f3171803f317180
DATA dwe32_ln2hi<>+24(SB)/8, $0x3f3171803f317180
DATA dwe32_ln2hi<>+32(SB)/8, $0x3f3171803f317180
DATA dwe32_ln2hi<>+40(SB)/8, $0x3f3171803f317180
DATA dwe32_ln2hi<>+48(SB)/8, $0x3f3171803f317180
DATA dwe32_ln2hi<>+56(SB)/8, $0x3f3171803f317180
GLOBL dwe32_ln2hi<>(SB), RODATA|NOPTR, $64
DATA dwe32_ln2lo<>+0(SB)/8, $0x3717f7d13717f7d1
DATA dwe32_ln2lo<>+8(SB)/8, $0x3717f7d13717f7d1
DATA dwe32_ln2lo<>+16(SB)/8, $0x3717f7d13717f7d1
DATA dwe32_ln2lo<>+24(SB)/8, $0x3717f7d13717f7d1
DATA dwe32_ln2lo<>+32(SB)/8, $0x3717f7d13717f7d1
DATA dwe32_ln2lo<>+40(SB)/8, $0x3717f7d13717f7d1
DATA dwe32_ln2lo<>+48(SB)/8, $0x3717f7d13717f7d1
DATA dwe32_ln2lo<>+56(SB)/8, $0x3717f7d13717f7d1
GLOBL dwe32_ln2lo<>(SB), RODATA|NOPTR, $64
DATA dwe32_half<>+0(SB)/8, $0x3f0000003f000000
DATA dwe32_half<>+8(SB)/8, $0x3f0000003f000000
DATA dwe32_half<>+16(SB)/8, $0x3f0000003f000000
DATA dwe32_half<>+24(SB)/8, $0x3f0000003f000000
DATA dwe32_half<>+32(SB)/8, $0x3f0000003f000000
DATA dwe32_half<>+40(SB)/8, $0x3f0000003f000000
DATA dwe32_half<>+48(SB)/8, $0x3f0000003f000000
DATA dwe32_half<>+56(SB)/8, $0x3f0000003f000000
GLOBL dwe32_half<>(SB), RODATA|NOPTR, $64
DATA dwe32_one<>+0(SB)/8, $0x3f8000003f800000
DATA dwe32_one<>+8(SB)/8, $0x3f8000003f800000
DATA dwe32_one<>+16(SB)/8, $0x3f8000003f800000
DATA dwe32_one<>+24(SB)/8, $0x3f8000003f800000
DATA dwe32_one<>+32(SB)/8, $0x3f8000003f800000
DATA dwe32_one<>+40(SB)/8, $0x3f8000003f800000
DATA dwe32_one<>+48(SB)/8, $0x3f8000003f800000
DATA dwe32_one<>+56(SB)/8, $0x3f8000003f800000
GLOBL dwe32_one<>(SB), RODATA|NOPTR, $64
DATA dwe32_two<>+0(SB)/8, $0x4000000040000000
DATA dwe32_two<>+8(SB)/8, $0x4000000040000000
DATA dwe32_two<>+16(SB)/8, $0x4000000040000000
DATA dwe32_two<>+24(SB)/8, $0x4000000040000000
DATA dwe32_two<>+32(SB)/8, $0x4000000040000000
DATA dwe32_two<>+40(SB)/8, $0x4000000040000000
DATA dwe32_two<>+48(SB)/8, $0x4000000040000000
DATA dwe32_two<>+56(SB)/8, $0x4000000040000000
GLOBL dwe32_two<>(SB), RODATA|NOPTR, $64
DATA dwe32_i127<>+0(SB)/8, $0x0000007f0000007f
DATA dwe32_i127<>+8(SB)/8, $0x0000007f0000007f
DATA dwe32_i127<>+16(SB)/8, $0x0000007f0000007f
DATA dwe32_i127<>+24(SB)/8, $0x0000007f0000007f
DATA dwe32_i127<>+32(SB)/8, $0x0000007f0000007f
DATA dwe32_i127<>+40(SB)/8, $0x0000007f0000007f
DATA dwe32_i127<>+48(SB)/8, $0x0000007f0000007f
DATA dwe32_i127<>+56(SB)/8, $0x0000007f0000007f
GLOBL dwe32_i127<>(SB), RODATA|NOPTR, $64
