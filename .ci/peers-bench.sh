#!/usr/bin/env bash
# Goldstone against its PyTorch peers (../shared/peers, README there) in ONE
# invocation, back to back on the same cores, so that the ratios are taken
# under one load (a shared machine's absolute times are not comparable
# between runs; its ratios in one run are):
#
#   1. the DWE full-batch time step, V = DWE_V (default 10,000), d = 100,
#      T = 2 on THREADS workers (BenchmarkPaperScale/fullbatch: the kernel's
#      s/timestep, its GFLOP/s, gonum's native Dgemm and optim's tile GEMM
#      on the same three products in the same run); then the float32
#      model's whole step (GOLDSTONE_BENCH_DTYPE=float32: LocalLoss32, its
#      GFLOP/s, and the float32 tile products gemmNT32/gemmAcc32 of the same
#      shapes timed right after it in the same iteration);
#   2. the PyTorch DWE step (dwe_step_torch.py, variant dense), float64 and
#      float32, and OpenBLAS's DGEMM/SGEMM on the same three products
#      (U C^T, X C, X^T U through torch.matmul: the tuned GEMM of these
#      cores, the roofline the kernel is held against);
#   3. the MovieLens training step at 1/5 of ML-20M, float64 and float32 (BenchmarkTrainStep/
#      driver: T = 100, 30k users, 6k items, d = 30, 2M ratings, AdaGrad)
#      and the PyTorch `fast` step (ml_step_torch.py --scale c), float64
#      and float32;
#
# then prints one table with the ratios (PyTorch time / goldstone time: > 1
# means goldstone is faster). The peers run under Debian's /usr/bin/python3
# with python3-torch and libopenblas0-openmp. OpenBLAS 0.3.21 takes this
# AMD EPYC (AVX-512) for Haswell (and the environment may set
# OPENBLAS_CORETYPE): the script times OpenBLAS's DGEMM on the three
# products at V = 2,000 under each core type in CORETYPES (default
# "SkylakeX Haswell") and runs every peer with the fastest. gonum's Dgemm is
# left out of the DWE benchmark (GOLDSTONE_BENCH_GONUM=0, about 40 s at V =
# 10,000; GONUM=1 keeps it). Run from the repository root:
#
#   bash .ci/peers-bench.sh            # THREADS=2 DWE_V=10000 ML_STEPS=4
#
# About 3 minutes on a quiet 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=${THREADS:-2}
dweV=${DWE_V:-10000}
mlSteps=${ML_STEPS:-4}
peers=${PEERS:-../shared/peers}
py=${PYTHON:-/usr/bin/python3}
for f in dwe_step_torch.py ml_step_torch.py; do
	[[ -f $peers/$f ]] || { echo "peers-bench.sh: $peers/$f missing (set PEERS)" >&2; exit 2; }
done
"$py" -c 'import torch' 2>/dev/null || { echo "peers-bench.sh: $py cannot import torch (apt-get install python3-torch)" >&2; exit 2; }

gemm='import json, sys, time
import torch
V, th = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(th)
out = {}
for name, dt in (("float64", torch.float64), ("float32", torch.float32)):
    g = torch.Generator().manual_seed(1)
    U, C = torch.randn(V, 100, generator=g, dtype=dt), torch.randn(V, 100, generator=g, dtype=dt)
    X = U @ C.T
    t0 = time.perf_counter()
    X = U @ C.T
    gU, gC = X @ C, X.T @ U
    out[name] = 6 * V * V * 100 / (time.perf_counter() - t0) / 1e9
print(json.dumps(out))'
best= bestGF=0
for ct in ${CORETYPES:-SkylakeX Haswell}; do
	gf=$(OPENBLAS_CORETYPE=$ct "$py" -c "$gemm" 2000 "$threads" | "$py" -c 'import json,sys; print(json.loads(sys.stdin.read())["float64"])')
	echo "# OpenBLAS DGEMM, V=2000, OPENBLAS_CORETYPE=$ct: $gf GFLOP/s"
	if awk -v a="$gf" -v b="$bestGF" 'BEGIN{exit !(a > b)}'; then best=$ct bestGF=$gf; fi
done
export OPENBLAS_CORETYPE=$best

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/dwe.test" ./models/dwe
go test -c -o "$bin/models.test" ./models

# metric NAME LINE: the value printed before unit NAME in a benchmark line.
metric() { awk -v u="$1" '{for (i = 2; i <= NF; i++) if ($i == u) {print $(i-1); exit}}' <<<"$2"; }
# json KEY... : a value from the JSON line on stdin.
json() { "$py" -c 'import json,sys
v = json.loads(sys.stdin.read().strip().splitlines()[-1])
for k in sys.argv[1:]:
    v = v[k]
print(v)' "$@"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
gobench() { # env..., binary, pattern, benchtime: the last benchmark line
	local out
	out=$(env GOMAXPROCS="$threads" "$@" 2>&1) || { echo "$out" >&2; exit 1; }
	grep '^Benchmark' <<<"$out" | tail -1
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); threads $threads; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-auto}"
echo "# load before: $(load)"

gonum=0
[[ ${GONUM:-0} == 1 ]] && gonum=1
dwe=$(gobench GOLDSTONE_BENCH_GONUM=$gonum GOLDSTONE_BENCH_V="$dweV" GOLDSTONE_BENCH_T=2 "$bin/dwe.test" -test.run '^$' -test.bench 'PaperScale/fullbatch/' -test.benchtime 1x)
echo "# goldstone DWE float64 (load $(load)): $dwe"
dwe32=$(gobench GOLDSTONE_BENCH_GONUM=$gonum GOLDSTONE_BENCH_DTYPE=float32 GOLDSTONE_BENCH_V="$dweV" GOLDSTONE_BENCH_T=2 "$bin/dwe.test" -test.run '^$' -test.bench 'PaperScale/fullbatch32/' -test.benchtime 1x)
echo "# goldstone DWE float32 step (load $(load)): $dwe32"
t64=$("$py" "$peers/dwe_step_torch.py" --V "$dweV" --d 100 --threads "$threads" --dtype float64 --variants dense --reps 1)
echo "# torch DWE float64 (load $(load)): $t64"
t32=$("$py" "$peers/dwe_step_torch.py" --V "$dweV" --d 100 --threads "$threads" --dtype float32 --variants dense --reps 1)
echo "# torch DWE float32 (load $(load)): $t32"
blas=$("$py" -c "$gemm" "$dweV" "$threads")
echo "# OpenBLAS GEMM GFLOP/s on the three products (load $(load)): $blas"

ml=$(gobench "$bin/models.test" -test.run '^$' -test.bench 'TrainStep/driver$' -test.benchtime "${mlSteps}x")
echo "# goldstone MovieLens float64 (load $(load)): $ml"
ml32=$(gobench GOLDSTONE_BENCH_DTYPE=float32 "$bin/models.test" -test.run '^$' -test.bench 'TrainStep/driver_float32$' -test.benchtime "${mlSteps}x")
echo "# goldstone MovieLens float32 (load $(load)): $ml32"
m64=$("$py" "$peers/ml_step_torch.py" --scale c --dtype float64 --threads "$threads" --variants fast --steps "$mlSteps" 2>/dev/null)
echo "# torch MovieLens float64 (load $(load)): $(json fast <<<"$m64")"
m32=$("$py" "$peers/ml_step_torch.py" --scale c --dtype float32 --threads "$threads" --variants fast --steps "$mlSteps" 2>/dev/null)
echo "# torch MovieLens float32 (load $(load)): $(json fast <<<"$m32")"
echo "# load after: $(load)"

gs=$(metric s/timestep "$dwe") g32=$(metric s/timestep "$dwe32")
tt64=$(json dense timestep_s <<<"$t64") tt32=$(json dense timestep_s <<<"$t32")
gf=$(metric GFLOP/s_kernel "$dwe") gf32=$(metric GFLOP/s_kernel32 "$dwe32") st32=$(metric sgemm_tiles_over_kernel "$dwe32") og=$(metric optim_gemm_over_kernel "$dwe")
ob64=$(json float64 <<<"$blas") ob32=$(json float32 <<<"$blas")
mls=$(metric s/step "$ml") mls32=$(metric s/step "$ml32") tm64=$(json fast step <<<"$m64") tm32=$(json fast step <<<"$m32")
printf '\n| what | goldstone | PyTorch | PyTorch / goldstone |\n|---|---|---|---|\n'
printf '| DWE time step, V=%s, d=100, float64 | %.3f s | %.3f s | %s |\n' "$dweV" "$gs" "$tt64" "$(ratio "$tt64" "$gs")"
printf '| DWE time step, float32 (the float32 model) | %.3f s | %.3f s | %s |\n' "$g32" "$tt32" "$(ratio "$tt32" "$g32")"
printf '| DWE GFLOP/s (6 V^2 d) vs OpenBLAS GEMM, float64 | %.1f | %.1f | %s |\n' "$gf" "$ob64" "$(ratio "$ob64" "$gf")"
printf '| DWE GFLOP/s vs OpenBLAS GEMM, float32 | %.1f | %.1f | %s |\n' "$gf32" "$ob32" "$(ratio "$ob32" "$gf32")"
printf '| DWE step over its own tile GEMM in the same run (float64 / float32) | %s / %s | | |\n' "$og" "$st32"
printf '| MovieLens step, 1/5 ML-20M, float64 | %.3f s (%s triads) | %.3f s | %s |\n' "$mls" "$(metric step/triad "$ml")" "$tm64" "$(ratio "$tm64" "$mls")"
printf '| MovieLens step, 1/5 ML-20M, float32 | %.3f s | %.3f s | %s |\n' "$mls32" "$tm32" "$(ratio "$tm32" "$mls32")"
