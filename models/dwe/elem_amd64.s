//go:build !purego

#include "textflag.h"

// elemAVX2: the element-wise work of negLogLik (kernel.go) on 4 entries at a
// time, by the same IEEE operations in the same order as the Go code (no
// fused multiply-adds), so every result has the same bits.

// func elemAVX2(x, b, lt, gs *float64, n int, ai, scale float64) bool
// For j < 4*(n/4), with xv = x[j] and w = ai*b[j]:
//   lt[j] = w * softplus(xv), gs[j] = (w * sig(xv)) * scale.
// It returns false (and the outputs are not to be used) when some |x[j]|
// is not <= 700 (NaN included): expNeg's other branch.
TEXT ·elemAVX2(SB), NOSPLIT, $0-57
	MOVQ x+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ lt+16(FP), DI
	MOVQ gs+24(FP), R8
	MOVQ n+32(FP), CX
	SHRQ $2, CX
	VPCMPEQQ Y15, Y15, Y15   // all ones: every lane in range so far
	TESTQ CX, CX
	JZ done

loop:
	VMOVUPD (SI), Y0                      // xv
	VANDPD dweC_absmask<>(SB), Y0, Y1     // a = |xv|
	VCMPPD $2, dweC_c700<>(SB), Y1, Y2    // a <= 700 (false for NaN)
	VANDPD Y2, Y15, Y15
	// expNeg(a)
	VMULPD dweC_log2e<>(SB), Y1, Y2
	VADDPD dweC_half<>(SB), Y2, Y2
	VROUNDPD $1, Y2, Y2                   // n = floor(a*log2e + 0.5)
	VMULPD dweC_ln2hi<>(SB), Y2, Y3
	VSUBPD Y1, Y3, Y3                     // n*ln2hi - a
	VMULPD dweC_ln2lo<>(SB), Y2, Y4
	VADDPD Y4, Y3, Y3                     // r
	VMOVUPD dweC_p13<>(SB), Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p12<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p11<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p10<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p9<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p8<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p7<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p6<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p5<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p4<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_p3<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_half<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_one<>(SB), Y4, Y4
	VMULPD Y3, Y4, Y4
	VADDPD dweC_one<>(SB), Y4, Y4         // p
	VADDPD dweC_magic<>(SB), Y2, Y5       // 2^52 + n: n in the low bits
	VPSUBQ dweC_magic<>(SB), Y5, Y5       // n as an integer
	VMOVUPD dweC_i1023<>(SB), Y6
	VPSUBQ Y5, Y6, Y5                     // 1023 - n
	VPSLLQ $52, Y5, Y5                    // 2^-n
	VMULPD Y5, Y4, Y4                     // e = exp(-a)
	// log(1+e), 1/(1+e)
	VADDPD dweC_one<>(SB), Y4, Y6         // y = 1 + e
	VCMPPD $13, dweC_sqrt2<>(SB), Y6, Y7  // y >= sqrt2
	VANDPD dweC_one<>(SB), Y7, Y7         // kl
	VMULPD dweC_half<>(SB), Y7, Y8
	VMOVUPD dweC_one<>(SB), Y9
	VSUBPD Y8, Y9, Y8                     // 1 - 0.5*kl
	VMULPD Y8, Y6, Y8
	VSUBPD dweC_one<>(SB), Y8, Y8         // f
	VADDPD dweC_two<>(SB), Y8, Y9         // 2 + f
	VMULPD Y9, Y6, Y10
	VMOVUPD dweC_one<>(SB), Y11
	VDIVPD Y10, Y11, Y10                  // q = 1/(y*(2+f))
	VMULPD Y10, Y9, Y9                    // inv = (2+f)*q
	VMULPD Y10, Y6, Y10
	VMULPD Y10, Y8, Y10                   // s = f*(y*q)
	VMULPD Y10, Y10, Y11                  // s2
	VMULPD Y11, Y11, Y12                  // s4
	VMULPD dweC_lg7<>(SB), Y12, Y13
	VADDPD dweC_lg5<>(SB), Y13, Y13
	VMULPD Y13, Y12, Y13
	VADDPD dweC_lg3<>(SB), Y13, Y13
	VMULPD Y13, Y12, Y13
	VADDPD dweC_lg1<>(SB), Y13, Y13
	VMULPD Y13, Y11, Y13                  // s2*(lg1+...)
	VMULPD dweC_lg6<>(SB), Y12, Y14
	VADDPD dweC_lg4<>(SB), Y14, Y14
	VMULPD Y14, Y12, Y14
	VADDPD dweC_lg2<>(SB), Y14, Y14
	VMULPD Y14, Y12, Y14                  // s4*(lg2+...)
	VADDPD Y14, Y13, Y13                  // r
	VMULPD dweC_half<>(SB), Y8, Y14
	VMULPD Y8, Y14, Y14                   // hfsq = 0.5*f*f
	VADDPD Y13, Y14, Y13                  // hfsq + r
	VMULPD Y13, Y10, Y13                  // s*(hfsq+r)
	VMULPD dweC_ln2lo<>(SB), Y7, Y11      // kl*ln2lo
	VADDPD Y11, Y13, Y13
	VSUBPD Y13, Y14, Y13                  // hfsq - (...)
	VSUBPD Y8, Y13, Y13                   // (...) - f
	VMULPD dweC_ln2hi<>(SB), Y7, Y11      // kl*ln2hi
	VSUBPD Y13, Y11, Y13
	VSUBPD dweC_one<>(SB), Y6, Y11        // y - 1
	VSUBPD Y11, Y4, Y11                   // e - (y-1)
	VMULPD Y9, Y11, Y11
	VADDPD Y11, Y13, Y13                  // l1 = log(1+e)
	VMULPD Y9, Y4, Y4                     // ei = e*inv
	// sig(x), softplus(x)
	VXORPD Y12, Y12, Y12
	VCMPPD $13, Y12, Y0, Y7               // xv >= 0
	VANDPD dweC_one<>(SB), Y7, Y7         // pf
	VMULPD Y9, Y7, Y9                     // pf*inv
	VMOVUPD dweC_one<>(SB), Y8
	VSUBPD Y7, Y8, Y8                     // 1 - pf
	VMULPD Y4, Y8, Y8                     // (1-pf)*ei
	VADDPD Y8, Y9, Y9                     // sig
	VMAXPD Y12, Y0, Y0                    // max(xv, 0)
	VADDPD Y0, Y13, Y13                   // spp = l1 + max(xv, 0)
	VBROADCASTSD ai+40(FP), Y8
	VMULPD (DX), Y8, Y8                   // w = ai*b
	VMULPD Y13, Y8, Y13
	VMOVUPD Y13, (DI)                     // lt = w*spp
	VMULPD Y9, Y8, Y9                     // g = w*sig
	VBROADCASTSD scale+48(FP), Y14
	VMULPD Y14, Y9, Y9
	VMOVUPD Y9, (R8)                      // gs = g*scale
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	ADDQ $32, R8
	DECQ CX
	JNZ loop

done:
	VMOVMSKPD Y15, AX
	CMPQ AX, $15
	SETEQ ret+56(FP)
	VZEROUPPER
	RET

DATA dweC_absmask<>+0(SB)/8, $0x7fffffffffffffff
DATA dweC_absmask<>+8(SB)/8, $0x7fffffffffffffff
DATA dweC_absmask<>+16(SB)/8, $0x7fffffffffffffff
DATA dweC_absmask<>+24(SB)/8, $0x7fffffffffffffff
GLOBL dweC_absmask<>(SB), RODATA|NOPTR, $32
DATA dweC_c700<>+0(SB)/8, $0x4085e00000000000
DATA dweC_c700<>+8(SB)/8, $0x4085e00000000000
DATA dweC_c700<>+16(SB)/8, $0x4085e00000000000
DATA dweC_c700<>+24(SB)/8, $0x4085e00000000000
GLOBL dweC_c700<>(SB), RODATA|NOPTR, $32
DATA dweC_log2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA dweC_log2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA dweC_log2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA dweC_log2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL dweC_log2e<>(SB), RODATA|NOPTR, $32
DATA dweC_half<>+0(SB)/8, $0x3fe0000000000000
DATA dweC_half<>+8(SB)/8, $0x3fe0000000000000
DATA dweC_half<>+16(SB)/8, $0x3fe0000000000000
DATA dweC_half<>+24(SB)/8, $0x3fe0000000000000
GLOBL dweC_half<>(SB), RODATA|NOPTR, $32
DATA dweC_ln2hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA dweC_ln2hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA dweC_ln2hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA dweC_ln2hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL dweC_ln2hi<>(SB), RODATA|NOPTR, $32
DATA dweC_ln2lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA dweC_ln2lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA dweC_ln2lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA dweC_ln2lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL dweC_ln2lo<>(SB), RODATA|NOPTR, $32
DATA dweC_p13<>+0(SB)/8, $0x3de6124613a86d09
DATA dweC_p13<>+8(SB)/8, $0x3de6124613a86d09
DATA dweC_p13<>+16(SB)/8, $0x3de6124613a86d09
DATA dweC_p13<>+24(SB)/8, $0x3de6124613a86d09
GLOBL dweC_p13<>(SB), RODATA|NOPTR, $32
DATA dweC_p12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA dweC_p12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA dweC_p12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA dweC_p12<>+24(SB)/8, $0x3e21eed8eff8d898
GLOBL dweC_p12<>(SB), RODATA|NOPTR, $32
DATA dweC_p11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA dweC_p11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA dweC_p11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA dweC_p11<>+24(SB)/8, $0x3e5ae64567f544e4
GLOBL dweC_p11<>(SB), RODATA|NOPTR, $32
DATA dweC_p10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA dweC_p10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA dweC_p10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA dweC_p10<>+24(SB)/8, $0x3e927e4fb7789f5c
GLOBL dweC_p10<>(SB), RODATA|NOPTR, $32
DATA dweC_p9<>+0(SB)/8, $0x3ec71de3a556c734
DATA dweC_p9<>+8(SB)/8, $0x3ec71de3a556c734
DATA dweC_p9<>+16(SB)/8, $0x3ec71de3a556c734
DATA dweC_p9<>+24(SB)/8, $0x3ec71de3a556c734
GLOBL dweC_p9<>(SB), RODATA|NOPTR, $32
DATA dweC_p8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA dweC_p8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA dweC_p8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA dweC_p8<>+24(SB)/8, $0x3efa01a01a01a01a
GLOBL dweC_p8<>(SB), RODATA|NOPTR, $32
DATA dweC_p7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA dweC_p7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA dweC_p7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA dweC_p7<>+24(SB)/8, $0x3f2a01a01a01a01a
GLOBL dweC_p7<>(SB), RODATA|NOPTR, $32
DATA dweC_p6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA dweC_p6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA dweC_p6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA dweC_p6<>+24(SB)/8, $0x3f56c16c16c16c17
GLOBL dweC_p6<>(SB), RODATA|NOPTR, $32
DATA dweC_p5<>+0(SB)/8, $0x3f81111111111111
DATA dweC_p5<>+8(SB)/8, $0x3f81111111111111
DATA dweC_p5<>+16(SB)/8, $0x3f81111111111111
DATA dweC_p5<>+24(SB)/8, $0x3f81111111111111
GLOBL dweC_p5<>(SB), RODATA|NOPTR, $32
DATA dweC_p4<>+0(SB)/8, $0x3fa5555555555555
DATA dweC_p4<>+8(SB)/8, $0x3fa5555555555555
DATA dweC_p4<>+16(SB)/8, $0x3fa5555555555555
DATA dweC_p4<>+24(SB)/8, $0x3fa5555555555555
GLOBL dweC_p4<>(SB), RODATA|NOPTR, $32
DATA dweC_p3<>+0(SB)/8, $0x3fc5555555555555
DATA dweC_p3<>+8(SB)/8, $0x3fc5555555555555
DATA dweC_p3<>+16(SB)/8, $0x3fc5555555555555
DATA dweC_p3<>+24(SB)/8, $0x3fc5555555555555
GLOBL dweC_p3<>(SB), RODATA|NOPTR, $32
DATA dweC_one<>+0(SB)/8, $0x3ff0000000000000
DATA dweC_one<>+8(SB)/8, $0x3ff0000000000000
DATA dweC_one<>+16(SB)/8, $0x3ff0000000000000
DATA dweC_one<>+24(SB)/8, $0x3ff0000000000000
GLOBL dweC_one<>(SB), RODATA|NOPTR, $32
DATA dweC_two<>+0(SB)/8, $0x4000000000000000
DATA dweC_two<>+8(SB)/8, $0x4000000000000000
DATA dweC_two<>+16(SB)/8, $0x4000000000000000
DATA dweC_two<>+24(SB)/8, $0x4000000000000000
GLOBL dweC_two<>(SB), RODATA|NOPTR, $32
DATA dweC_magic<>+0(SB)/8, $0x4330000000000000
DATA dweC_magic<>+8(SB)/8, $0x4330000000000000
DATA dweC_magic<>+16(SB)/8, $0x4330000000000000
DATA dweC_magic<>+24(SB)/8, $0x4330000000000000
GLOBL dweC_magic<>(SB), RODATA|NOPTR, $32
DATA dweC_i1023<>+0(SB)/8, $0x00000000000003ff
DATA dweC_i1023<>+8(SB)/8, $0x00000000000003ff
DATA dweC_i1023<>+16(SB)/8, $0x00000000000003ff
DATA dweC_i1023<>+24(SB)/8, $0x00000000000003ff
GLOBL dweC_i1023<>(SB), RODATA|NOPTR, $32
DATA dweC_sqrt2<>+0(SB)/8, $0x3ff6a09e667f3bcd
DATA dweC_sqrt2<>+8(SB)/8, $0x3ff6a09e667f3bcd
DATA dweC_sqrt2<>+16(SB)/8, $0x3ff6a09e667f3bcd
DATA dweC_sqrt2<>+24(SB)/8, $0x3ff6a09e667f3bcd
GLOBL dweC_sqrt2<>(SB), RODATA|NOPTR, $32
DATA dweC_lg1<>+0(SB)/8, $0x3fe5555555555593
DATA dweC_lg1<>+8(SB)/8, $0x3fe5555555555593
DATA dweC_lg1<>+16(SB)/8, $0x3fe5555555555593
DATA dweC_lg1<>+24(SB)/8, $0x3fe5555555555593
GLOBL dweC_lg1<>(SB), RODATA|NOPTR, $32
DATA dweC_lg2<>+0(SB)/8, $0x3fd999999997fa04
DATA dweC_lg2<>+8(SB)/8, $0x3fd999999997fa04
DATA dweC_lg2<>+16(SB)/8, $0x3fd999999997fa04
DATA dweC_lg2<>+24(SB)/8, $0x3fd999999997fa04
GLOBL dweC_lg2<>(SB), RODATA|NOPTR, $32
DATA dweC_lg3<>+0(SB)/8, $0x3fd2492494229359
DATA dweC_lg3<>+8(SB)/8, $0x3fd2492494229359
DATA dweC_lg3<>+16(SB)/8, $0x3fd2492494229359
DATA dweC_lg3<>+24(SB)/8, $0x3fd2492494229359
GLOBL dweC_lg3<>(SB), RODATA|NOPTR, $32
DATA dweC_lg4<>+0(SB)/8, $0x3fcc71c51d8e78af
DATA dweC_lg4<>+8(SB)/8, $0x3fcc71c51d8e78af
DATA dweC_lg4<>+16(SB)/8, $0x3fcc71c51d8e78af
DATA dweC_lg4<>+24(SB)/8, $0x3fcc71c51d8e78af
GLOBL dweC_lg4<>(SB), RODATA|NOPTR, $32
DATA dweC_lg5<>+0(SB)/8, $0x3fc7466496cb03de
DATA dweC_lg5<>+8(SB)/8, $0x3fc7466496cb03de
DATA dweC_lg5<>+16(SB)/8, $0x3fc7466496cb03de
DATA dweC_lg5<>+24(SB)/8, $0x3fc7466496cb03de
GLOBL dweC_lg5<>(SB), RODATA|NOPTR, $32
DATA dweC_lg6<>+0(SB)/8, $0x3fc39a09d078c69f
DATA dweC_lg6<>+8(SB)/8, $0x3fc39a09d078c69f
DATA dweC_lg6<>+16(SB)/8, $0x3fc39a09d078c69f
DATA dweC_lg6<>+24(SB)/8, $0x3fc39a09d078c69f
GLOBL dweC_lg6<>(SB), RODATA|NOPTR, $32
DATA dweC_lg7<>+0(SB)/8, $0x3fc2f112df3e5244
DATA dweC_lg7<>+8(SB)/8, $0x3fc2f112df3e5244
DATA dweC_lg7<>+16(SB)/8, $0x3fc2f112df3e5244
DATA dweC_lg7<>+24(SB)/8, $0x3fc2f112df3e5244
GLOBL dweC_lg7<>(SB), RODATA|NOPTR, $32
