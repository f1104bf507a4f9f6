//go:build !purego

#include "textflag.h"

// Kernels of the logistic MF block pass (logisticmf.go) for n <= 8 ratings,
// rating b joining the user column us[b] and the item column is[b] (a
// negative entry e stands for ^e) of the D-vectors in x and g. They do the
// same IEEE operations in the same order as lmfDotsGo and lmfAxpysGo
// (kernels.go): FMA, four lanes, lanes reduced as (l0+l2)+(l1+l3), then the
// d%4 tail entries one by one.

// func lmfDotsFMA(x *float64, us, is *int32, n, d int, sc *float64)
TEXT ·lmfDotsFMA(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ us+8(FP), R10
	MOVQ is+16(FP), R11
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), DX
	MOVQ sc+40(FP), DI
	MOVQ DX, R12
	SHLQ $3, R12  // bytes per column
	MOVQ DX, R13
	ANDQ $-4, R13 // entries done four at a time
	TESTQ CX, CX
	JLE  dots_done

dots_rating:
	MOVLQSX (R10), AX
	IMULQ R12, AX
	ADDQ SI, AX // user vector
	MOVLQSX (R11), BX
	MOVQ BX, R8
	SARQ $63, R8
	XORQ R8, BX
	IMULQ R12, BX
	ADDQ SI, BX // item vector
	VXORPD Y0, Y0, Y0
	XORQ R9, R9
	CMPQ R9, R13
	JGE  dots_reduce

dots_vec:
	VMOVUPD (AX)(R9*8), Y1
	VFMADD231PD (BX)(R9*8), Y1, Y0
	ADDQ $4, R9
	CMPQ R9, R13
	JLT  dots_vec

dots_reduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0      // l0+l2, l1+l3
	VPERMILPD $1, X0, X1
	VADDSD X1, X0, X0
	CMPQ R9, DX
	JGE  dots_store

dots_tail:
	VMOVSD (AX)(R9*8), X1
	VFMADD231SD (BX)(R9*8), X1, X0
	INCQ R9
	CMPQ R9, DX
	JLT  dots_tail

dots_store:
	VMOVSD X0, (DI)
	ADDQ $8, DI
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  dots_rating

dots_done:
	VZEROUPPER
	RET

// func lmfAxpysFMA(x, gr *float64, us, is *int32, n, d int, cf *float64)
// For every rating b < n: g[u] += cf[b] x[v] and g[v] += cf[b] x[u], entry
// by entry as FMA(cf, x, g).
TEXT ·lmfAxpysFMA(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ gr+8(FP), DI
	MOVQ us+16(FP), R10
	MOVQ is+24(FP), R11
	MOVQ n+32(FP), CX
	MOVQ d+40(FP), DX
	MOVQ cf+48(FP), R14
	MOVQ DX, R12
	SHLQ $3, R12
	MOVQ DX, R13
	ANDQ $-4, R13
	TESTQ CX, CX
	JLE  axpys_done

axpys_rating:
	MOVLQSX (R10), AX
	IMULQ R12, AX // user offset in bytes
	MOVLQSX (R11), BX
	MOVQ BX, R8
	SARQ $63, R8
	XORQ R8, BX
	IMULQ R12, BX // item offset in bytes
	VBROADCASTSD (R14), Y2
	LEAQ (SI)(AX*1), R8  // x user
	ADDQ DI, AX          // g user
	LEAQ (SI)(BX*1), R9  // x item
	ADDQ DI, BX          // g item
	XORQ DX, DX
	CMPQ DX, R13
	JGE  axpys_tail0

axpys_vec:
	VMOVUPD (AX)(DX*8), Y3
	VFMADD231PD (R9)(DX*8), Y2, Y3
	VMOVUPD Y3, (AX)(DX*8)
	VMOVUPD (BX)(DX*8), Y4
	VFMADD231PD (R8)(DX*8), Y2, Y4
	VMOVUPD Y4, (BX)(DX*8)
	ADDQ $4, DX
	CMPQ DX, R13
	JLT  axpys_vec

axpys_tail0:
	MOVQ d+40(FP), R13
	CMPQ DX, R13
	JGE  axpys_restore

axpys_tail:
	VMOVSD (AX)(DX*8), X3
	VFMADD231SD (R9)(DX*8), X2, X3
	VMOVSD X3, (AX)(DX*8)
	VMOVSD (BX)(DX*8), X4
	VFMADD231SD (R8)(DX*8), X2, X4
	VMOVSD X4, (BX)(DX*8)
	INCQ DX
	CMPQ DX, R13
	JLT  axpys_tail

axpys_restore:
	ANDQ $-4, R13
	ADDQ $8, R14
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  axpys_rating

axpys_done:
	VZEROUPPER
	RET

// func prefetchCols(x, gr *float64, us, is *int32, n, cb int)
// Prefetches the cache lines of the n user and item columns (cb bytes each)
// in x and g.
// Prefetches neither fault nor change memory.
TEXT ·prefetchCols(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ gr+8(FP), DI
	MOVQ us+16(FP), R10
	MOVQ is+24(FP), R11
	MOVQ n+32(FP), CX
	MOVQ cb+40(FP), DX
	TESTQ CX, CX
	JLE  pf_done

pf_rating:
	MOVLQSX (R10), AX
	IMULQ DX, AX
	MOVLQSX (R11), BX
	MOVQ BX, R8
	SARQ $63, R8
	XORQ R8, BX
	IMULQ DX, BX
	XORQ R9, R9

pf_line:
	LEAQ (AX)(R9*1), R8
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DI)(R8*1)
	LEAQ (BX)(R9*1), R8
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DI)(R8*1)
	ADDQ $64, R9
	CMPQ R9, DX
	JLT  pf_line
	LEAQ -8(AX)(DX*1), R8 // the last entries' lines
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DI)(R8*1)
	LEAQ -8(BX)(DX*1), R8
	PREFETCHT0 (SI)(R8*1)
	PREFETCHT0 (DI)(R8*1)
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  pf_rating

pf_done:
	RET

// func lmfDots32FMA(x *float32, us, is *int32, n, d int, sc *float64)
// lmfDotsFMA on float32 columns: each entry widened to float64
// (VCVTPS2PD, exact), then the same FMA chains, lanes and tail as
// lmfDotsGo[float32].
TEXT ·lmfDots32FMA(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ us+8(FP), R10
	MOVQ is+16(FP), R11
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), DX
	MOVQ sc+40(FP), DI
	MOVQ DX, R12
	SHLQ $2, R12  // bytes per column
	MOVQ DX, R13
	ANDQ $-4, R13 // entries done four at a time
	TESTQ CX, CX
	JLE  dots32_done

dots32_rating:
	MOVLQSX (R10), AX
	IMULQ R12, AX
	ADDQ SI, AX // user vector
	MOVLQSX (R11), BX
	MOVQ BX, R8
	SARQ $63, R8
	XORQ R8, BX
	IMULQ R12, BX
	ADDQ SI, BX // item vector
	VXORPD Y0, Y0, Y0
	XORQ R9, R9
	CMPQ R9, R13
	JGE  dots32_reduce

dots32_vec:
	VCVTPS2PD (AX)(R9*4), Y1
	VCVTPS2PD (BX)(R9*4), Y2
	VFMADD231PD Y2, Y1, Y0
	ADDQ $4, R9
	CMPQ R9, R13
	JLT  dots32_vec

dots32_reduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0      // l0+l2, l1+l3
	VPERMILPD $1, X0, X1
	VADDSD X1, X0, X0
	CMPQ R9, DX
	JGE  dots32_store

dots32_tail:
	VCVTSS2SD (AX)(R9*4), X1, X1
	VCVTSS2SD (BX)(R9*4), X3, X3
	VFMADD231SD X3, X1, X0
	INCQ R9
	CMPQ R9, DX
	JLT  dots32_tail

dots32_store:
	VMOVSD X0, (DI)
	ADDQ $8, DI
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  dots32_rating

dots32_done:
	VZEROUPPER
	RET

// func lmfAxpys32FMA(x, gr *float32, us, is *int32, n, d int, cf *float64)
// lmfAxpysFMA on float32 columns: g = float32(FMA(cf, float64(x),
// float64(g))) entry by entry, as lmfAxpysGo[float32].
TEXT ·lmfAxpys32FMA(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ gr+8(FP), DI
	MOVQ us+16(FP), R10
	MOVQ is+24(FP), R11
	MOVQ n+32(FP), CX
	MOVQ d+40(FP), DX
	MOVQ cf+48(FP), R14
	MOVQ DX, R12
	SHLQ $2, R12
	MOVQ DX, R13
	ANDQ $-4, R13
	TESTQ CX, CX
	JLE  axpys32_done

axpys32_rating:
	MOVLQSX (R10), AX
	IMULQ R12, AX // user offset in bytes
	MOVLQSX (R11), BX
	MOVQ BX, R8
	SARQ $63, R8
	XORQ R8, BX
	IMULQ R12, BX // item offset in bytes
	VBROADCASTSD (R14), Y2
	LEAQ (SI)(AX*1), R8  // x user
	ADDQ DI, AX          // g user
	LEAQ (SI)(BX*1), R9  // x item
	ADDQ DI, BX          // g item
	XORQ DX, DX
	CMPQ DX, R13
	JGE  axpys32_tail0

axpys32_vec:
	VCVTPS2PD (AX)(DX*4), Y3
	VCVTPS2PD (R9)(DX*4), Y5
	VFMADD231PD Y5, Y2, Y3
	VCVTPD2PSY Y3, X3
	VMOVUPS X3, (AX)(DX*4)
	VCVTPS2PD (BX)(DX*4), Y4
	VCVTPS2PD (R8)(DX*4), Y6
	VFMADD231PD Y6, Y2, Y4
	VCVTPD2PSY Y4, X4
	VMOVUPS X4, (BX)(DX*4)
	ADDQ $4, DX
	CMPQ DX, R13
	JLT  axpys32_vec

axpys32_tail0:
	MOVQ d+40(FP), R13
	CMPQ DX, R13
	JGE  axpys32_restore

axpys32_tail:
	VCVTSS2SD (AX)(DX*4), X3, X3
	VCVTSS2SD (R9)(DX*4), X5, X5
	VFMADD231SD X5, X2, X3
	VCVTSD2SS X3, X3, X3
	VMOVSS X3, (AX)(DX*4)
	VCVTSS2SD (BX)(DX*4), X4, X4
	VCVTSS2SD (R8)(DX*4), X6, X6
	VFMADD231SD X6, X2, X4
	VCVTSD2SS X4, X4, X4
	VMOVSS X4, (BX)(DX*4)
	INCQ DX
	CMPQ DX, R13
	JLT  axpys32_tail

axpys32_restore:
	ANDQ $-4, R13
	ADDQ $8, R14
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ  axpys32_rating

axpys32_done:
	VZEROUPPER
	RET
