//go:build !purego

#include "textflag.h"

// elemAVX512: elemAVX2 (elem_amd64.s) on 8 entries at a time, with the
// loss terms summed in column order: the same IEEE operations in the same
// order as elemRowGo (no fused multiply-adds; VRNDSCALEPD $1 is VROUNDPD
// $1's floor; the comparisons go to mask registers and select 1 or 0
// exactly as the AVX2 code's masks ANDed with 1), so every result has the
// same bits. AVX-512 F only.
//
// The work is split in two passes over the chunk (e = exp(-|x|) for all
// entries, then the rest), whose iterations are short enough for the CPU
// to overlap many of them: each entry is one long dependency chain (the
// exp polynomial, a division, the log polynomial), which one pass over
// groups of 8 could not hide. The second pass also adds the first nsum
// groups' loss terms to loss one by one in column order (a serial chain
// of additions that runs beside the vector work instead of after it).

// func elemAVX512(x, b, lt, gs *float64, n int, ai, scale, loss float64, nsum int) (float64, bool)
// For j < 8*(n/8), with xv = x[j] and w = ai*b[j]:
//   lt[j] = w * softplus(xv), gs[j] = (w * sig(xv)) * scale,
// and it returns loss + lt[0] + lt[1] + ... + lt[8 nsum - 1] (in that
// order; nsum <= n/8). It returns false (and the outputs are not to be
// used) when some |x[j]| is not <= 700 (NaN included): expNeg's other
// branch.
TEXT ·elemAVX512(SB), NOSPLIT, $0-81
	MOVQ x+0(FP), SI
	MOVQ gs+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ $0xff, AX
	KMOVW AX, K7             // every lane in range so far
	SHRQ $3, CX
	JZ done
	MOVQ CX, BX

passA:
	VMOVUPD (SI), Z0                      // xv
	VPANDQ dweZ_absmask<>(SB), Z0, Z1     // a = |xv|
	VCMPPD $2, dweZ_c700<>(SB), Z1, K1    // a <= 700 (false for NaN)
	KANDW K1, K7, K7
	// expNeg(a)
	VMULPD dweZ_log2e<>(SB), Z1, Z2
	VADDPD dweZ_half<>(SB), Z2, Z2
	VRNDSCALEPD $1, Z2, Z2                   // n = floor(a*log2e + 0.5)
	VMULPD dweZ_ln2hi<>(SB), Z2, Z3
	VSUBPD Z1, Z3, Z3                     // n*ln2hi - a
	VMULPD dweZ_ln2lo<>(SB), Z2, Z4
	VADDPD Z4, Z3, Z3                     // r
	VMOVUPD dweZ_p13<>(SB), Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p12<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p11<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p10<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p9<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p8<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p7<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p6<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p5<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p4<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_p3<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_half<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_one<>(SB), Z4, Z4
	VMULPD Z3, Z4, Z4
	VADDPD dweZ_one<>(SB), Z4, Z4         // p
	VADDPD dweZ_magic<>(SB), Z2, Z5       // 2^52 + n: n in the low bits
	VPSUBQ dweZ_magic<>(SB), Z5, Z5       // n as an integer
	VMOVUPD dweZ_i1023<>(SB), Z6
	VPSUBQ Z5, Z6, Z5                     // 1023 - n
	VPSLLQ $52, Z5, Z5                    // 2^-n
	VMULPD Z5, Z4, Z4                     // e = exp(-a)
	VMOVUPD Z4, (R8)                      // e, in gs until phase B
	ADDQ $64, SI
	ADDQ $64, R8
	DECQ CX
	JNZ passA

	MOVQ x+0(FP), SI
	MOVQ b+8(FP), DX
	MOVQ lt+16(FP), DI
	MOVQ gs+24(FP), R8
	MOVQ nsum+64(FP), R9
	VMOVSD loss+56(FP), X15

passB:
	VMOVUPD (SI), Z0                      // xv
	VMOVUPD (R8), Z4                      // e
	// log(1+e), 1/(1+e)
	VADDPD dweZ_one<>(SB), Z4, Z6         // y = 1 + e
	VCMPPD $13, dweZ_sqrt2<>(SB), Z6, K2  // y >= sqrt2
	VMOVUPD.Z dweZ_one<>(SB), K2, Z7      // kl
	VMULPD dweZ_half<>(SB), Z7, Z8
	VMOVUPD dweZ_one<>(SB), Z9
	VSUBPD Z8, Z9, Z8                     // 1 - 0.5*kl
	VMULPD Z8, Z6, Z8
	VSUBPD dweZ_one<>(SB), Z8, Z8         // f
	VADDPD dweZ_two<>(SB), Z8, Z9         // 2 + f
	VMULPD Z9, Z6, Z10
	VMOVUPD dweZ_one<>(SB), Z11
	VDIVPD Z10, Z11, Z10                  // q = 1/(y*(2+f))
	VMULPD Z10, Z9, Z9                    // inv = (2+f)*q
	VMULPD Z10, Z6, Z10
	VMULPD Z10, Z8, Z10                   // s = f*(y*q)
	VMULPD Z10, Z10, Z11                  // s2
	VMULPD Z11, Z11, Z12                  // s4
	VMULPD dweZ_lg7<>(SB), Z12, Z13
	VADDPD dweZ_lg5<>(SB), Z13, Z13
	VMULPD Z13, Z12, Z13
	VADDPD dweZ_lg3<>(SB), Z13, Z13
	VMULPD Z13, Z12, Z13
	VADDPD dweZ_lg1<>(SB), Z13, Z13
	VMULPD Z13, Z11, Z13                  // s2*(lg1+...)
	VMULPD dweZ_lg6<>(SB), Z12, Z14
	VADDPD dweZ_lg4<>(SB), Z14, Z14
	VMULPD Z14, Z12, Z14
	VADDPD dweZ_lg2<>(SB), Z14, Z14
	VMULPD Z14, Z12, Z14                  // s4*(lg2+...)
	VADDPD Z14, Z13, Z13                  // r
	VMULPD dweZ_half<>(SB), Z8, Z14
	VMULPD Z8, Z14, Z14                   // hfsq = 0.5*f*f
	VADDPD Z13, Z14, Z13                  // hfsq + r
	VMULPD Z13, Z10, Z13                  // s*(hfsq+r)
	VMULPD dweZ_ln2lo<>(SB), Z7, Z11      // kl*ln2lo
	VADDPD Z11, Z13, Z13
	VSUBPD Z13, Z14, Z13                  // hfsq - (...)
	VSUBPD Z8, Z13, Z13                   // (...) - f
	VMULPD dweZ_ln2hi<>(SB), Z7, Z11      // kl*ln2hi
	VSUBPD Z13, Z11, Z13
	VSUBPD dweZ_one<>(SB), Z6, Z11        // y - 1
	VSUBPD Z11, Z4, Z11                   // e - (y-1)
	VMULPD Z9, Z11, Z11
	VADDPD Z11, Z13, Z13                  // l1 = log(1+e)
	VMULPD Z9, Z4, Z4                     // ei = e*inv
	// sig(x), softplus(x)
	VPXORQ Z12, Z12, Z12
	VCMPPD $13, Z12, Z0, K3               // xv >= 0
	VMOVUPD.Z dweZ_one<>(SB), K3, Z7      // pf
	VMULPD Z9, Z7, Z9                     // pf*inv
	VMOVUPD dweZ_one<>(SB), Z8
	VSUBPD Z7, Z8, Z8                     // 1 - pf
	VMULPD Z4, Z8, Z8                     // (1-pf)*ei
	VADDPD Z8, Z9, Z9                     // sig
	VMAXPD Z12, Z0, Z0                    // max(xv, 0)
	VADDPD Z0, Z13, Z13                   // spp = l1 + max(xv, 0)
	VBROADCASTSD ai+40(FP), Z8
	VMULPD (DX), Z8, Z8                   // w = ai*b
	VMULPD Z13, Z8, Z13
	VMOVUPD Z13, (DI)                     // lt = w*spp
	VMULPD Z9, Z8, Z9                     // g = w*sig
	VBROADCASTSD scale+48(FP), Z14
	VMULPD Z14, Z9, Z9
	VMOVUPD Z9, (R8)                      // gs = g*scale

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
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	ADDQ $64, R8
	DECQ BX
	JNZ passB
	VMOVSD X15, ret+72(FP)

done:
	KMOVW K7, AX
	ANDQ $0xff, AX
	CMPQ AX, $0xff
	SETEQ ret1+80(FP)
	VZEROUPPER
	RET

DATA dweZ_absmask<>+0(SB)/8, $0x7fffffffffffffff
DATA dweZ_absmask<>+8(SB)/8, $0x7fffffffffffffff
DATA dweZ_absmask<>+16(SB)/8, $0x7fffffffffffffff
DATA dweZ_absmask<>+24(SB)/8, $0x7fffffffffffffff
DATA dweZ_absmask<>+32(SB)/8, $0x7fffffffffffffff
DATA dweZ_absmask<>+40(SB)/8, $0x7fffffffffffffff
DATA dweZ_absmask<>+48(SB)/8, $0x7fffffffffffffff
DATA dweZ_absmask<>+56(SB)/8, $0x7fffffffffffffff
GLOBL dweZ_absmask<>(SB), RODATA|NOPTR, $64
DATA dweZ_c700<>+0(SB)/8, $0x4085e00000000000
DATA dweZ_c700<>+8(SB)/8, $0x4085e00000000000
DATA dweZ_c700<>+16(SB)/8, $0x4085e00000000000
DATA dweZ_c700<>+24(SB)/8, $0x4085e00000000000
DATA dweZ_c700<>+32(SB)/8, $0x4085e00000000000
DATA dweZ_c700<>+40(SB)/8, $0x4085e00000000000
DATA dweZ_c700<>+48(SB)/8, $0x4085e00000000000
DATA dweZ_c700<>+56(SB)/8, $0x4085e00000000000
GLOBL dweZ_c700<>(SB), RODATA|NOPTR, $64
DATA dweZ_log2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA dweZ_log2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA dweZ_log2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA dweZ_log2e<>+24(SB)/8, $0x3ff71547652b82fe
DATA dweZ_log2e<>+32(SB)/8, $0x3ff71547652b82fe
DATA dweZ_log2e<>+40(SB)/8, $0x3ff71547652b82fe
DATA dweZ_log2e<>+48(SB)/8, $0x3ff71547652b82fe
DATA dweZ_log2e<>+56(SB)/8, $0x3ff71547652b82fe
GLOBL dweZ_log2e<>(SB), RODATA|NOPTR, $64
DATA dweZ_half<>+0(SB)/8, $0x3fe0000000000000
DATA dweZ_half<>+8(SB)/8, $0x3fe0000000000000
DATA dweZ_half<>+16(SB)/8, $0x3fe0000000000000
DATA dweZ_half<>+24(SB)/8, $0x3fe0000000000000
DATA dweZ_half<>+32(SB)/8, $0x3fe0000000000000
DATA dweZ_half<>+40(SB)/8, $0x3fe0000000000000
DATA dweZ_half<>+48(SB)/8, $0x3fe0000000000000
DATA dweZ_half<>+56(SB)/8, $0x3fe0000000000000
GLOBL dweZ_half<>(SB), RODATA|NOPTR, $64
DATA dweZ_ln2hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA dweZ_ln2hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA dweZ_ln2hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA dweZ_ln2hi<>+24(SB)/8, $0x3fe62e42fee00000
DATA dweZ_ln2hi<>+32(SB)/8, $0x3fe62e42fee00000
DATA dweZ_ln2hi<>+40(SB)/8, $0x3fe62e42fee00000
DATA dweZ_ln2hi<>+48(SB)/8, $0x3fe62e42fee00000
DATA dweZ_ln2hi<>+56(SB)/8, $0x3fe62e42fee00000
GLOBL dweZ_ln2hi<>(SB), RODATA|NOPTR, $64
DATA dweZ_ln2lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA dweZ_ln2lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA dweZ_ln2lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA dweZ_ln2lo<>+24(SB)/8, $0x3dea39ef35793c76
DATA dweZ_ln2lo<>+32(SB)/8, $0x3dea39ef35793c76
DATA dweZ_ln2lo<>+40(SB)/8, $0x3dea39ef35793c76
DATA dweZ_ln2lo<>+48(SB)/8, $0x3dea39ef35793c76
DATA dweZ_ln2lo<>+56(SB)/8, $0x3dea39ef35793c76
GLOBL dweZ_ln2lo<>(SB), RODATA|NOPTR, $64
DATA dweZ_p13<>+0(SB)/8, $0x3de6124613a86d09
DATA dweZ_p13<>+8(SB)/8, $0x3de6124613a86d09
DATA dweZ_p13<>+16(SB)/8, $0x3de6124613a86d09
DATA dweZ_p13<>+24(SB)/8, $0x3de6124613a86d09
DATA dweZ_p13<>+32(SB)/8, $0x3de6124613a86d09
DATA dweZ_p13<>+40(SB)/8, $0x3de6124613a86d09
DATA dweZ_p13<>+48(SB)/8, $0x3de6124613a86d09
DATA dweZ_p13<>+56(SB)/8, $0x3de6124613a86d09
GLOBL dweZ_p13<>(SB), RODATA|NOPTR, $64
DATA dweZ_p12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA dweZ_p12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA dweZ_p12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA dweZ_p12<>+24(SB)/8, $0x3e21eed8eff8d898
DATA dweZ_p12<>+32(SB)/8, $0x3e21eed8eff8d898
DATA dweZ_p12<>+40(SB)/8, $0x3e21eed8eff8d898
DATA dweZ_p12<>+48(SB)/8, $0x3e21eed8eff8d898
DATA dweZ_p12<>+56(SB)/8, $0x3e21eed8eff8d898
GLOBL dweZ_p12<>(SB), RODATA|NOPTR, $64
DATA dweZ_p11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA dweZ_p11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA dweZ_p11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA dweZ_p11<>+24(SB)/8, $0x3e5ae64567f544e4
DATA dweZ_p11<>+32(SB)/8, $0x3e5ae64567f544e4
DATA dweZ_p11<>+40(SB)/8, $0x3e5ae64567f544e4
DATA dweZ_p11<>+48(SB)/8, $0x3e5ae64567f544e4
DATA dweZ_p11<>+56(SB)/8, $0x3e5ae64567f544e4
GLOBL dweZ_p11<>(SB), RODATA|NOPTR, $64
DATA dweZ_p10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA dweZ_p10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA dweZ_p10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA dweZ_p10<>+24(SB)/8, $0x3e927e4fb7789f5c
DATA dweZ_p10<>+32(SB)/8, $0x3e927e4fb7789f5c
DATA dweZ_p10<>+40(SB)/8, $0x3e927e4fb7789f5c
DATA dweZ_p10<>+48(SB)/8, $0x3e927e4fb7789f5c
DATA dweZ_p10<>+56(SB)/8, $0x3e927e4fb7789f5c
GLOBL dweZ_p10<>(SB), RODATA|NOPTR, $64
DATA dweZ_p9<>+0(SB)/8, $0x3ec71de3a556c734
DATA dweZ_p9<>+8(SB)/8, $0x3ec71de3a556c734
DATA dweZ_p9<>+16(SB)/8, $0x3ec71de3a556c734
DATA dweZ_p9<>+24(SB)/8, $0x3ec71de3a556c734
DATA dweZ_p9<>+32(SB)/8, $0x3ec71de3a556c734
DATA dweZ_p9<>+40(SB)/8, $0x3ec71de3a556c734
DATA dweZ_p9<>+48(SB)/8, $0x3ec71de3a556c734
DATA dweZ_p9<>+56(SB)/8, $0x3ec71de3a556c734
GLOBL dweZ_p9<>(SB), RODATA|NOPTR, $64
DATA dweZ_p8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA dweZ_p8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA dweZ_p8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA dweZ_p8<>+24(SB)/8, $0x3efa01a01a01a01a
DATA dweZ_p8<>+32(SB)/8, $0x3efa01a01a01a01a
DATA dweZ_p8<>+40(SB)/8, $0x3efa01a01a01a01a
DATA dweZ_p8<>+48(SB)/8, $0x3efa01a01a01a01a
DATA dweZ_p8<>+56(SB)/8, $0x3efa01a01a01a01a
GLOBL dweZ_p8<>(SB), RODATA|NOPTR, $64
DATA dweZ_p7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA dweZ_p7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA dweZ_p7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA dweZ_p7<>+24(SB)/8, $0x3f2a01a01a01a01a
DATA dweZ_p7<>+32(SB)/8, $0x3f2a01a01a01a01a
DATA dweZ_p7<>+40(SB)/8, $0x3f2a01a01a01a01a
DATA dweZ_p7<>+48(SB)/8, $0x3f2a01a01a01a01a
DATA dweZ_p7<>+56(SB)/8, $0x3f2a01a01a01a01a
GLOBL dweZ_p7<>(SB), RODATA|NOPTR, $64
DATA dweZ_p6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA dweZ_p6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA dweZ_p6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA dweZ_p6<>+24(SB)/8, $0x3f56c16c16c16c17
DATA dweZ_p6<>+32(SB)/8, $0x3f56c16c16c16c17
DATA dweZ_p6<>+40(SB)/8, $0x3f56c16c16c16c17
DATA dweZ_p6<>+48(SB)/8, $0x3f56c16c16c16c17
DATA dweZ_p6<>+56(SB)/8, $0x3f56c16c16c16c17
GLOBL dweZ_p6<>(SB), RODATA|NOPTR, $64
DATA dweZ_p5<>+0(SB)/8, $0x3f81111111111111
DATA dweZ_p5<>+8(SB)/8, $0x3f81111111111111
DATA dweZ_p5<>+16(SB)/8, $0x3f81111111111111
DATA dweZ_p5<>+24(SB)/8, $0x3f81111111111111
DATA dweZ_p5<>+32(SB)/8, $0x3f81111111111111
DATA dweZ_p5<>+40(SB)/8, $0x3f81111111111111
DATA dweZ_p5<>+48(SB)/8, $0x3f81111111111111
DATA dweZ_p5<>+56(SB)/8, $0x3f81111111111111
GLOBL dweZ_p5<>(SB), RODATA|NOPTR, $64
DATA dweZ_p4<>+0(SB)/8, $0x3fa5555555555555
DATA dweZ_p4<>+8(SB)/8, $0x3fa5555555555555
DATA dweZ_p4<>+16(SB)/8, $0x3fa5555555555555
DATA dweZ_p4<>+24(SB)/8, $0x3fa5555555555555
DATA dweZ_p4<>+32(SB)/8, $0x3fa5555555555555
DATA dweZ_p4<>+40(SB)/8, $0x3fa5555555555555
DATA dweZ_p4<>+48(SB)/8, $0x3fa5555555555555
DATA dweZ_p4<>+56(SB)/8, $0x3fa5555555555555
GLOBL dweZ_p4<>(SB), RODATA|NOPTR, $64
DATA dweZ_p3<>+0(SB)/8, $0x3fc5555555555555
DATA dweZ_p3<>+8(SB)/8, $0x3fc5555555555555
DATA dweZ_p3<>+16(SB)/8, $0x3fc5555555555555
DATA dweZ_p3<>+24(SB)/8, $0x3fc5555555555555
DATA dweZ_p3<>+32(SB)/8, $0x3fc5555555555555
DATA dweZ_p3<>+40(SB)/8, $0x3fc5555555555555
DATA dweZ_p3<>+48(SB)/8, $0x3fc5555555555555
DATA dweZ_p3<>+56(SB)/8, $0x3fc5555555555555
GLOBL dweZ_p3<>(SB), RODATA|NOPTR, $64
DATA dweZ_one<>+0(SB)/8, $0x3ff0000000000000
DATA dweZ_one<>+8(SB)/8, $0x3ff0000000000000
DATA dweZ_one<>+16(SB)/8, $0x3ff0000000000000
DATA dweZ_one<>+24(SB)/8, $0x3ff0000000000000
DATA dweZ_one<>+32(SB)/8, $0x3ff0000000000000
DATA dweZ_one<>+40(SB)/8, $0x3ff0000000000000
DATA dweZ_one<>+48(SB)/8, $0x3ff0000000000000
DATA dweZ_one<>+56(SB)/8, $0x3ff0000000000000
GLOBL dweZ_one<>(SB), RODATA|NOPTR, $64
DATA dweZ_two<>+0(SB)/8, $0x4000000000000000
DATA dweZ_two<>+8(SB)/8, $0x4000000000000000
DATA dweZ_two<>+16(SB)/8, $0x4000000000000000
DATA dweZ_two<>+24(SB)/8, $0x4000000000000000
DATA dweZ_two<>+32(SB)/8, $0x4000000000000000
DATA dweZ_two<>+40(SB)/8, $0x4000000000000000
DATA dweZ_two<>+48(SB)/8, $0x4000000000000000
DATA dweZ_two<>+56(SB)/8, $0x4000000000000000
GLOBL dweZ_two<>(SB), RODATA|NOPTR, $64
DATA dweZ_magic<>+0(SB)/8, $0x4330000000000000
DATA dweZ_magic<>+8(SB)/8, $0x4330000000000000
DATA dweZ_magic<>+16(SB)/8, $0x4330000000000000
DATA dweZ_magic<>+24(SB)/8, $0x4330000000000000
DATA dweZ_magic<>+32(SB)/8, $0x4330000000000000
DATA dweZ_magic<>+40(SB)/8, $0x4330000000000000
DATA dweZ_magic<>+48(SB)/8, $0x4330000000000000
DATA dweZ_magic<>+56(SB)/8, $0x4330000000000000
GLOBL dweZ_magic<>(SB), RODATA|NOPTR, $64
DATA dweZ_i1023<>+0(SB)/8, $0x00000000000003ff
DATA dweZ_i1023<>+8(SB)/8, $0x00000000000003ff
DATA dweZ_i1023<>+16(SB)/8, $0x00000000000003ff
DATA dweZ_i1023<>+24(SB)/8, $0x00000000000003ff
DATA dweZ_i1023<>+32(SB)/8, $0x00000000000003ff
DATA dweZ_i1023<>+40(SB)/8, $0x00000000000003ff
DATA dweZ_i1023<>+48(SB)/8, $0x00000000000003ff
DATA dweZ_i1023<>+56(SB)/8, $0x00000000000003ff
GLOBL dweZ_i1023<>(SB), RODATA|NOPTR, $64
DATA dweZ_sqrt2<>+0(SB)/8, $0x3ff6a09e667f3bcd
DATA dweZ_sqrt2<>+8(SB)/8, $0x3ff6a09e667f3bcd
DATA dweZ_sqrt2<>+16(SB)/8, $0x3ff6a09e667f3bcd
DATA dweZ_sqrt2<>+24(SB)/8, $0x3ff6a09e667f3bcd
DATA dweZ_sqrt2<>+32(SB)/8, $0x3ff6a09e667f3bcd
DATA dweZ_sqrt2<>+40(SB)/8, $0x3ff6a09e667f3bcd
DATA dweZ_sqrt2<>+48(SB)/8, $0x3ff6a09e667f3bcd
DATA dweZ_sqrt2<>+56(SB)/8, $0x3ff6a09e667f3bcd
GLOBL dweZ_sqrt2<>(SB), RODATA|NOPTR, $64
DATA dweZ_lg1<>+0(SB)/8, $0x3fe5555555555593
DATA dweZ_lg1<>+8(SB)/8, $0x3fe5555555555593
DATA dweZ_lg1<>+16(SB)/8, $0x3fe5555555555593
DATA dweZ_lg1<>+24(SB)/8, $0x3fe5555555555593
DATA dweZ_lg1<>+32(SB)/8, $0x3fe5555555555593
DATA dweZ_lg1<>+40(SB)/8, $0x3fe5555555555593
DATA dweZ_lg1<>+48(SB)/8, $0x3fe5555555555593
DATA dweZ_lg1<>+56(SB)/8, $0x3fe5555555555593
GLOBL dweZ_lg1<>(SB), RODATA|NOPTR, $64
DATA dweZ_lg2<>+0(SB)/8, $0x3fd999999997fa04
DATA dweZ_lg2<>+8(SB)/8, $0x3fd999999997fa04
DATA dweZ_lg2<>+16(SB)/8, $0x3fd999999997fa04
DATA dweZ_lg2<>+24(SB)/8, $0x3fd999999997fa04
DATA dweZ_lg2<>+32(SB)/8, $0x3fd999999997fa04
DATA dweZ_lg2<>+40(SB)/8, $0x3fd999999997fa04
DATA dweZ_lg2<>+48(SB)/8, $0x3fd999999997fa04
DATA dweZ_lg2<>+56(SB)/8, $0x3fd999999997fa04
GLOBL dweZ_lg2<>(SB), RODATA|NOPTR, $64
DATA dweZ_lg3<>+0(SB)/8, $0x3fd2492494229359
DATA dweZ_lg3<>+8(SB)/8, $0x3fd2492494229359
DATA dweZ_lg3<>+16(SB)/8, $0x3fd2492494229359
DATA dweZ_lg3<>+24(SB)/8, $0x3fd2492494229359
DATA dweZ_lg3<>+32(SB)/8, $0x3fd2492494229359
DATA dweZ_lg3<>+40(SB)/8, $0x3fd2492494229359
DATA dweZ_lg3<>+48(SB)/8, $0x3fd2492494229359
DATA dweZ_lg3<>+56(SB)/8, $0x3fd2492494229359
GLOBL dweZ_lg3<>(SB), RODATA|NOPTR, $64
DATA dweZ_lg4<>+0(SB)/8, $0x3fcc71c51d8e78af
DATA dweZ_lg4<>+8(SB)/8, $0x3fcc71c51d8e78af
DATA dweZ_lg4<>+16(SB)/8, $0x3fcc71c51d8e78af
DATA dweZ_lg4<>+24(SB)/8, $0x3fcc71c51d8e78af
DATA dweZ_lg4<>+32(SB)/8, $0x3fcc71c51d8e78af
DATA dweZ_lg4<>+40(SB)/8, $0x3fcc71c51d8e78af
DATA dweZ_lg4<>+48(SB)/8, $0x3fcc71c51d8e78af
DATA dweZ_lg4<>+56(SB)/8, $0x3fcc71c51d8e78af
GLOBL dweZ_lg4<>(SB), RODATA|NOPTR, $64
DATA dweZ_lg5<>+0(SB)/8, $0x3fc7466496cb03de
DATA dweZ_lg5<>+8(SB)/8, $0x3fc7466496cb03de
DATA dweZ_lg5<>+16(SB)/8, $0x3fc7466496cb03de
DATA dweZ_lg5<>+24(SB)/8, $0x3fc7466496cb03de
DATA dweZ_lg5<>+32(SB)/8, $0x3fc7466496cb03de
DATA dweZ_lg5<>+40(SB)/8, $0x3fc7466496cb03de
DATA dweZ_lg5<>+48(SB)/8, $0x3fc7466496cb03de
DATA dweZ_lg5<>+56(SB)/8, $0x3fc7466496cb03de
GLOBL dweZ_lg5<>(SB), RODATA|NOPTR, $64
DATA dweZ_lg6<>+0(SB)/8, $0x3fc39a09d078c69f
DATA dweZ_lg6<>+8(SB)/8, $0x3fc39a09d078c69f
DATA dweZ_lg6<>+16(SB)/8, $0x3fc39a09d078c69f
DATA dweZ_lg6<>+24(SB)/8, $0x3fc39a09d078c69f
DATA dweZ_lg6<>+32(SB)/8, $0x3fc39a09d078c69f
DATA dweZ_lg6<>+40(SB)/8, $0x3fc39a09d078c69f
DATA dweZ_lg6<>+48(SB)/8, $0x3fc39a09d078c69f
DATA dweZ_lg6<>+56(SB)/8, $0x3fc39a09d078c69f
GLOBL dweZ_lg6<>(SB), RODATA|NOPTR, $64
DATA dweZ_lg7<>+0(SB)/8, $0x3fc2f112df3e5244
DATA dweZ_lg7<>+8(SB)/8, $0x3fc2f112df3e5244
DATA dweZ_lg7<>+16(SB)/8, $0x3fc2f112df3e5244
DATA dweZ_lg7<>+24(SB)/8, $0x3fc2f112df3e5244
DATA dweZ_lg7<>+32(SB)/8, $0x3fc2f112df3e5244
DATA dweZ_lg7<>+40(SB)/8, $0x3fc2f112df3e5244
DATA dweZ_lg7<>+48(SB)/8, $0x3fc2f112df3e5244
DATA dweZ_lg7<>+56(SB)/8, $0x3fc2f112df3e5244
GLOBL dweZ_lg7<>(SB), RODATA|NOPTR, $64
