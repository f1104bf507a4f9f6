#!/usr/bin/env bash
# Scaling of the two training steps with the number of workers, from prebuilt
# test binaries (no Go toolchain, no network needed where it runs):
#
#   go test -c -o devbench/models.test ./models
#   go test -c -o devbench/dwe.test ./models/dwe
#   cp .ci/device-scaling.sh devbench/
#   bash devbench/device-scaling.sh devbench        # on the big machine
#
# For each worker count in WORKERS (default "1 2 4 8 16"; GOMAXPROCS=N, which
# sets the benchmarks' pool size: one process per count, so that every timed
# iteration runs at N) it runs
#   - the MovieLens step: BenchmarkTrainStep/driver of ./models (1/5 of ML-20M:
#     T=100, 30k users, 6k items, d=30, 2M ratings, AdaGrad) with a triad pass
#     over the parameter-sized arrays timed between steps (its bandwidth is
#     3 x 8 bytes x params / s_triad);
#   - the DWE step: BenchmarkPaperScale/fullbatch of ./models/dwe at V=DWE_V
#     (default 4000), d=100, T=DWE_T (default 16, a time step per worker at
#     16), with its in-run DGEMMs (gonum's native Dgemm, optim's tile GEMM);
# and prints one table (also to $OUT/scaling.txt when OUT is set). Each figure
# is the median over the iterations of one process; STEPS (default 4) sets the
# MovieLens iterations. About 2-3 minutes on 16 cores.
set -euo pipefail

dir=${1:?usage: device-scaling.sh DIR (holding models.test and dwe.test)}
workers=${WORKERS:-1 2 4 8 16}
steps=${STEPS:-4}
dweV=${DWE_V:-4000}
dweT=${DWE_T:-16}
for f in models.test dwe.test; do
	[[ -x $dir/$f ]] || { echo "device-scaling.sh: $dir/$f: missing or not executable (build it with go test -c)" >&2; exit 2; }
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# metric NAME LINE: the value printed before unit NAME in a benchmark line.
metric() { awk -v u="$1" '{for (i = 2; i <= NF; i++) if ($i == u) {print $(i-1); exit}}' <<<"$2"; }

table=$(mktemp)
trap 'rm -f "$log" "$table"' EXIT
{
	echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-7s | %-10s %-10s %-10s %-8s %-9s %-8s | %-11s %-9s %-9s %-9s %-9s\n' \
		workers ml_s/step ml_s/local ml_s/dense triads triad_GB/s ml_spdup \
		dwe_s/tstep dwe_GF/s gonum_GF/s optim_GF/s dwe_spdup
} >"$table"
ml1= dwe1=
for n in $workers; do
	GOMAXPROCS=$n "$dir/models.test" -test.run '^$' -test.bench 'TrainStep/driver' \
		-test.benchtime "${steps}x" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	ml=$(grep '^BenchmarkTrainStep/driver' "$log" | tail -1)
	GOMAXPROCS=$n GOLDSTONE_BENCH_V=$dweV GOLDSTONE_BENCH_T=$dweT "$dir/dwe.test" -test.run '^$' \
		-test.bench 'PaperScale/fullbatch' -test.benchtime 1x >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	dwe=$(grep '^BenchmarkPaperScale/fullbatch' "$log" | tail -1)
	[[ -n $ml && -n $dwe ]] || { echo "device-scaling.sh: no benchmark line at $n workers" >&2; exit 1; }
	step=$(metric s/step "$ml") triad=$(metric s/triad "$ml") params=$(metric params "$ml")
	ts=$(metric s/timestep "$dwe")
	ml1=${ml1:-$step} dwe1=${dwe1:-$ts}
	printf '%-7s | %-10.4f %-10.4f %-10.4f %-8.2f %-10.1f %-8.2f | %-11.4f %-9.1f %-9.1f %-9.1f %-9.2f\n' \
		"$n" "$step" "$(metric s/local "$ml")" "$(metric s/dense "$ml")" "$(metric step/triad "$ml")" \
		"$(awk -v p="$params" -v t="$triad" 'BEGIN{print 24*p/t/1e9}')" \
		"$(awk -v a="$ml1" -v b="$step" 'BEGIN{print a/b}')" \
		"$ts" "$(metric GFLOP/s_kernel "$dwe")" "$(metric GFLOP/s_gonum_dgemm "$dwe")" \
		"$(metric GFLOP/s_optim_gemm "$dwe")" "$(awk -v a="$dwe1" -v b="$ts" 'BEGIN{print a/b}')" >>"$table"
done
echo "# ml: s/step, s/local, s/dense medians of $steps steps; triads = step/triad; dwe: V=$dweV d=100 T=$dweT, one full-batch evaluation per count; spdup: time at the first count / time here" >>"$table"
cat "$table"
if [[ -n ${OUT:-} ]]; then
	mkdir -p "$OUT"
	cp "$table" "$OUT/scaling.txt"
fi
