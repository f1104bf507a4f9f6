//go:build !purego

#include "textflag.h"

// AVX kernels of the elementwise optimizer updates, four entries at a time.
// Every entry goes through the same IEEE operations, in the same order, as
// the scalar Go loops in adagrad.go and adam.go (no FMA), so the results are
// bit-identical to them. n is a multiple of 4.

// func adagradAVX(x, gr, h *float64, n int, rho, eps float64)
TEXT ·adagradAVX(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ h+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD rho+32(FP), Y14
	VBROADCASTSD eps+40(FP), Y15
	SHRQ $2, CX
	JZ adagrad_done

adagrad_loop:
	VMOVUPD (SI), Y0         // g
	VMULPD  Y0, Y0, Y1       // g*g
	VMOVUPD (DX), Y2
	VADDPD  Y1, Y2, Y1       // h + g*g
	VMOVUPD Y1, (DX)
	VSQRTPD Y1, Y1
	VADDPD  Y15, Y1, Y1      // sqrt(h) + eps
	VMULPD  Y0, Y14, Y0      // rho*g
	VDIVPD  Y1, Y0, Y0       // rho*g / (sqrt(h)+eps)
	VMOVUPD (DI), Y3
	VSUBPD  Y0, Y3, Y3       // x - ...
	VMOVUPD Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ  adagrad_loop

adagrad_done:
	VZEROUPPER
	RET

// func adamAVX(x, gr, m, v *float64, n int, b1, omb1, b2, omb2, rho, c1, c2, eps float64)
TEXT ·adamAVX(SB), NOSPLIT, $0-104
	MOVQ x+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ v+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSD b1+40(FP), Y8
	VBROADCASTSD omb1+48(FP), Y9
	VBROADCASTSD b2+56(FP), Y10
	VBROADCASTSD omb2+64(FP), Y11
	VBROADCASTSD rho+72(FP), Y12
	VBROADCASTSD c1+80(FP), Y13
	VBROADCASTSD c2+88(FP), Y14
	VBROADCASTSD eps+96(FP), Y15
	SHRQ $2, CX
	JZ adam_done

adam_loop:
	VMOVUPD (SI), Y0         // g
	VMOVUPD (DX), Y1         // m
	VMULPD  Y1, Y8, Y1       // b1*m
	VMULPD  Y0, Y9, Y2       // (1-b1)*g
	VADDPD  Y2, Y1, Y1       // mi
	VMOVUPD Y1, (DX)
	VMOVUPD (BX), Y3         // v
	VMULPD  Y3, Y10, Y3      // b2*v
	VMULPD  Y0, Y11, Y4      // (1-b2)*g
	VMULPD  Y0, Y4, Y4       // ((1-b2)*g)*g
	VADDPD  Y4, Y3, Y3       // vi
	VMOVUPD Y3, (BX)
	VMULPD  Y13, Y1, Y1      // mi*c1
	VMULPD  Y1, Y12, Y1      // rho*(mi*c1)
	VMULPD  Y14, Y3, Y3      // vi*c2
	VSQRTPD Y3, Y3
	VADDPD  Y15, Y3, Y3      // sqrt(vi*c2) + eps
	VDIVPD  Y3, Y1, Y1
	VMOVUPD (DI), Y5
	VSUBPD  Y1, Y5, Y5
	VMOVUPD Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, DI
	DECQ CX
	JNZ  adam_loop

adam_done:
	VZEROUPPER
	RET

// func chainRowAVX(gb, gr, z, prev, zn *float64, n int, l2, wl, wr float64, acc *[8]float64, ahead int)
// For i < n (a multiple of 4), with lane = i%4:
//	gi := gr[i] + l2*z[i]; acc[4+lane] += z[i]*z[i]
//	gi -= wl*(prev[i]-z[i])
//	d := z[i]-zn[i]; acc[lane] += d*d
//	gb[i] = gi + wr*d; prev[i] = z[i]; gr[i] = 0
// and prefetches gr and zn ahead bytes further (the next row's; no effect on
// results).
TEXT ·chainRowAVX(SB), NOSPLIT, $0-88
	MOVQ gb+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ z+16(FP), DX
	MOVQ prev+24(FP), BX
	MOVQ zn+32(FP), R8
	MOVQ n+40(FP), CX
	VBROADCASTSD l2+48(FP), Y13
	VBROADCASTSD wl+56(FP), Y14
	VBROADCASTSD wr+64(FP), Y15
	MOVQ acc+72(FP), AX
	MOVQ ahead+80(FP), R9
	VMOVUPD 0(AX), Y11       // s lanes
	VMOVUPD 32(AX), Y12      // r lanes
	VXORPD  Y10, Y10, Y10    // zero
	SHRQ $2, CX
	JZ chain_done

chain_loop:
	PREFETCHT0 (SI)(R9*1)
	PREFETCHT0 (R8)(R9*1)
	VMOVUPD (DX), Y0         // z
	VMULPD  Y0, Y13, Y1      // l2*z
	VADDPD  (SI), Y1, Y1     // g + l2*z
	VMULPD  Y0, Y0, Y2       // z*z
	VADDPD  Y2, Y12, Y12     // r += z*z
	VMOVUPD (BX), Y3         // prev
	VSUBPD  Y0, Y3, Y3       // prev - z
	VMULPD  Y3, Y14, Y3      // wl*(prev - z)
	VSUBPD  Y3, Y1, Y1       // gi -= ...
	VMOVUPD (R8), Y4         // zn
	VSUBPD  Y4, Y0, Y4       // d = z - zn
	VMULPD  Y4, Y4, Y5       // d*d
	VADDPD  Y5, Y11, Y11     // s += d*d
	VMULPD  Y4, Y15, Y4      // wr*d
	VADDPD  Y4, Y1, Y1       // gi + wr*d
	VMOVUPD Y1, (DI)
	VMOVUPD Y0, (BX)
	VMOVUPD Y10, (SI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, R8
	DECQ CX
	JNZ  chain_loop

chain_done:
	VMOVUPD Y11, 0(AX)
	VMOVUPD Y12, 32(AX)
	VZEROUPPER
	RET

// func adagradChainRowAVX(z, gr, p, prev, zn, h *float64, n int, l2, wl, wr, rho, eps float64, acc *[8]float64, ahead int)
// chainRowAVX and adagradAVX in one pass: for i < n (a multiple of 4), with
// lane = i%4,
//	gi := gr[i] + l2*z[i]; acc[4+lane] += z[i]*z[i]
//	gi -= wl*(p[i]-z[i])
//	d := z[i]-zn[i]; acc[lane] += d*d
//	gi += wr*d; prev[i] = z[i]; gr[i] = 0
//	h[i] += gi*gi; z[i] -= rho*gi / (sqrt(h[i]) + eps)
// (the same IEEE operations in the same order as chainRowAVX followed by
// adagradAVX on its output), prefetching gr, zn and h ahead bytes further.
// p may be z (a row without a left neighbour: wl = 0); prev is then a
// separate buffer.
TEXT ·adagradChainRowAVX(SB), NOSPLIT, $0-112
	MOVQ z+0(FP), DX
	MOVQ gr+8(FP), SI
	MOVQ p+16(FP), BX
	MOVQ prev+24(FP), R10
	MOVQ zn+32(FP), R8
	MOVQ h+40(FP), R11
	MOVQ n+48(FP), CX
	VBROADCASTSD l2+56(FP), Y13
	VBROADCASTSD wl+64(FP), Y14
	VBROADCASTSD wr+72(FP), Y15
	VBROADCASTSD rho+80(FP), Y8
	VBROADCASTSD eps+88(FP), Y9
	MOVQ acc+96(FP), AX
	MOVQ ahead+104(FP), R9
	VMOVUPD 0(AX), Y11       // s lanes
	VMOVUPD 32(AX), Y12      // r lanes
	VXORPD  Y10, Y10, Y10    // zero
	SHRQ $2, CX
	JZ agchain_done

agchain_loop:
	PREFETCHT0 (SI)(R9*1)
	PREFETCHT0 (R8)(R9*1)
	PREFETCHT0 (R11)(R9*1)
	VMOVUPD (DX), Y0         // z
	VMULPD  Y0, Y13, Y1      // l2*z
	VADDPD  (SI), Y1, Y1     // g + l2*z
	VMULPD  Y0, Y0, Y2       // z*z
	VADDPD  Y2, Y12, Y12     // r += z*z
	VMOVUPD (BX), Y3         // p
	VSUBPD  Y0, Y3, Y3       // p - z
	VMULPD  Y3, Y14, Y3      // wl*(p - z)
	VSUBPD  Y3, Y1, Y1       // gi -= ...
	VMOVUPD (R8), Y4         // zn
	VSUBPD  Y4, Y0, Y4       // d = z - zn
	VMULPD  Y4, Y4, Y5       // d*d
	VADDPD  Y5, Y11, Y11     // s += d*d
	VMULPD  Y4, Y15, Y4      // wr*d
	VADDPD  Y4, Y1, Y1       // gi + wr*d
	VMOVUPD Y0, (R10)        // prev = z
	VMOVUPD Y10, (SI)        // g = 0
	VMULPD  Y1, Y1, Y6       // gi*gi
	VMOVUPD (R11), Y7
	VADDPD  Y6, Y7, Y6       // h + gi*gi
	VMOVUPD Y6, (R11)
	VSQRTPD Y6, Y6
	VADDPD  Y9, Y6, Y6       // sqrt(h) + eps
	VMULPD  Y1, Y8, Y1       // rho*gi
	VDIVPD  Y6, Y1, Y1       // rho*gi / (sqrt(h)+eps)
	VSUBPD  Y1, Y0, Y0       // z - ...
	VMOVUPD Y0, (DX)
	ADDQ $32, DX
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, R10
	ADDQ $32, R8
	ADDQ $32, R11
	DECQ CX
	JNZ  agchain_loop

agchain_done:
	VMOVUPD Y11, 0(AX)
	VMOVUPD Y12, 32(AX)
	VZEROUPPER
	RET

// func adagradChainRow32AVX(z, gr, p, prev, zn, h *float32, n int, l2, wl, wr, rho, eps float32, acc *[8]float64, ahead int)
// adagradChainRowAVX on float32 rows, eight entries at a time (n is a
// multiple of 8): the same float32 operations as chainRow and
// AdaGradOf[float32].Update's Go loops (VSQRTPS is the correctly rounded
// root, as float32(math.Sqrt(float64(h))) is), with z*z and d*d taken in
// float64 and added to the lanes i%4 of acc, entry i before entry i+4.
TEXT ·adagradChainRow32AVX(SB), NOSPLIT, $0-96
	MOVQ z+0(FP), DX
	MOVQ gr+8(FP), SI
	MOVQ p+16(FP), BX
	MOVQ prev+24(FP), R10
	MOVQ zn+32(FP), R8
	MOVQ h+40(FP), R11
	MOVQ n+48(FP), CX
	VBROADCASTSS l2+56(FP), Y13
	VBROADCASTSS wl+60(FP), Y14
	VBROADCASTSS wr+64(FP), Y15
	VBROADCASTSS rho+68(FP), Y8
	VBROADCASTSS eps+72(FP), Y9
	MOVQ acc+80(FP), AX
	MOVQ ahead+88(FP), R9
	VMOVUPD 0(AX), Y11       // s lanes (float64)
	VMOVUPD 32(AX), Y12      // r lanes (float64)
	VXORPS  Y10, Y10, Y10    // zero
	SHRQ $3, CX
	JZ agchain32_done

agchain32_loop:
	PREFETCHT0 (SI)(R9*1)
	PREFETCHT0 (R8)(R9*1)
	PREFETCHT0 (R11)(R9*1)
	VMOVUPS (DX), Y0         // z
	VMULPS  Y0, Y13, Y1      // l2*z
	VADDPS  (SI), Y1, Y1     // g + l2*z
	VCVTPS2PD X0, Y2         // z[0:4] in float64
	VMULPD  Y2, Y2, Y2
	VADDPD  Y2, Y12, Y12     // r += z*z
	VEXTRACTF128 $1, Y0, X3
	VCVTPS2PD X3, Y3         // z[4:8]
	VMULPD  Y3, Y3, Y3
	VADDPD  Y3, Y12, Y12
	VMOVUPS (BX), Y3         // p
	VSUBPS  Y0, Y3, Y3       // p - z
	VMULPS  Y3, Y14, Y3      // wl*(p - z)
	VSUBPS  Y3, Y1, Y1       // gi -= ...
	VMOVUPS (R8), Y4         // zn
	VSUBPS  Y4, Y0, Y4       // d = z - zn
	VCVTPS2PD X4, Y5         // d[0:4] in float64
	VMULPD  Y5, Y5, Y5
	VADDPD  Y5, Y11, Y11     // s += d*d
	VEXTRACTF128 $1, Y4, X6
	VCVTPS2PD X6, Y6         // d[4:8]
	VMULPD  Y6, Y6, Y6
	VADDPD  Y6, Y11, Y11
	VMULPS  Y4, Y15, Y4      // wr*d
	VADDPS  Y4, Y1, Y1       // gi + wr*d
	VMOVUPS Y0, (R10)        // prev = z
	VMOVUPS Y10, (SI)        // g = 0
	VMULPS  Y1, Y1, Y6       // gi*gi
	VADDPS  (R11), Y6, Y6    // h + gi*gi
	VMOVUPS Y6, (R11)
	VSQRTPS Y6, Y6
	VADDPS  Y9, Y6, Y6       // sqrt(h) + eps
	VMULPS  Y1, Y8, Y1       // rho*gi
	VDIVPS  Y6, Y1, Y1       // rho*gi / (sqrt(h)+eps)
	VSUBPS  Y1, Y0, Y0       // z - ...
	VMOVUPS Y0, (DX)
	ADDQ $32, DX
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, R10
	ADDQ $32, R8
	ADDQ $32, R11
	DECQ CX
	JNZ  agchain32_loop

agchain32_done:
	VMOVUPD Y11, 0(AX)
	VMOVUPD Y12, 32(AX)
	VZEROUPPER
	RET
