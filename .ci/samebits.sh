#!/usr/bin/env bash
# Same results on every machine (README): the numeric packages' tests and
# the golden tests again under the builds other than the default, all
# against the same testdata files (optim, models, models/dwe:
# testdata/*.bits.json through TestBits, bit for bit; the kernel tests
# compare the assembly with its Go twins; stages/pipelines: TestGolden
# against stages/*/testdata/golden.json). A failure names the first
# differing value. .ci/run calls it after go test ./... (the default
# GOAMD64=v1 build; there internal/fmacheck checks the compiled code of v1,
# v3, purego and arm64 for compiler fusion, and cmd/runner's
# TestReproAcrossBuilds reproduces recorded runs with the v3 and purego
# runners). Run it alone with bash .ci/samebits.sh [build...], builds among
# v3 purego v4 arm64 (default: all); it prints each build's time.
#
# The float32 mode (dtype = "float32") has its own contract, checked the
# same way: models/testdata/models-float32.bits.json (TestBitsFloat32: the
# float32 kernels, the Driver and the gauge rounds on float32 parameters),
# the float32 variants of stages/movielens/testdata/golden.json
# (TestGolden: float32 trials end to end), and optim's float32 tests
# (the float32 Driver and gauge rounds against the float64 ones of the
# same build). SAMEBITS_RUN narrows every build to the tests it matches
# (go test -run); SAMEBITS_RUN=float32 is the float32 part alone:
#   SAMEBITS_RUN=float32 bash .ci/samebits.sh [build...]
#
#   v3      GOAMD64=v3 (the compiler may fuse x*y+z), cgo: every test of the
#           numeric packages and of stages/pipelines
#   purego  GOAMD64=v3 -tags purego (the Go twins instead of the assembly)
#   v4      GOAMD64=v4: run where the CPU has AVX-512, else compiled only
#   arm64   cross-compiled without cgo, run under qemu-aarch64 (Debian's
#           qemu-user): the numeric packages' tests and TestGolden (the
#           pipelines' other tests need SQLite, which is cgo)
#
# The float32 DWE mode has its own bits file, models/dwe/testdata/
# dwe-float32.bits.json (TestBits32, in the models/dwe run of every build).
set -euo pipefail
cd "$(dirname "$0")/.."

numeric="./optim ./models ./models/dwe"
golden="./stages/pipelines"
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(v3 purego v4 arm64)

only="${SAMEBITS_RUN:-}"
[ "$only" = float32 ] && only='^(TestBitsFloat32|TestFloat32Gradient|TestFloat32AgreesWithFloat64|TestDriverFloat32|TestDriverFloat32NoAlloc|TestGauge32|TestGauge32NoAlloc|TestRotateOverlap32|TestFMA32|TestGemm32|TestGolden)$'

run_build() { # name, then environment assignments
  env "${@:2}" go test -count=1 ${only:+-run "$only"} $numeric $golden
}

arm64() {
  command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 not on PATH: apt-get install qemu-user" >&2; return 1; }
  local pkg bin run
  for pkg in $numeric $golden; do
    bin="$bins/$(echo "${pkg#./}" | tr / _).test"
    CGO_ENABLED=0 GOARCH=arm64 go test -c -o "$bin" "$pkg"
    run='.'
    [ "$pkg" = "$golden" ] && run='^TestGolden$'
    [ -n "$only" ] && run="$only"
    # TestMAPRecoversPlanted (a convergence test: 11 s native, minutes
    # emulated) is left out; TestBits covers the bits of MAP training.
    (cd "$pkg" && qemu-aarch64 "$bin" -test.count=1 -test.timeout=20m \
      -test.run="$run" -test.skip='^TestMAPRecoversPlanted$')
    echo "ok  	arm64 $pkg (qemu-aarch64)"
  done
}

v4() {
  local f
  for f in avx512f avx512bw avx512cd avx512dq avx512vl; do
    if ! grep -qw "$f" /proc/cpuinfo; then
      echo "this CPU has no AVX-512 ($f): GOAMD64=v4 compiled only"
      GOAMD64=v4 go test -c -o "$bins/" $numeric $golden
      return
    fi
  done
  run_build v4 GOAMD64=v4
}

bins=$(mktemp -d) # the test binaries built to run elsewhere
trap 'rm -rf "$bins"' EXIT
total=$SECONDS
for b in "${builds[@]}"; do
  echo "== same bits: $b"
  start=$SECONDS
  case $b in
  v3) run_build v3 GOAMD64=v3 ;;
  purego) run_build purego GOAMD64=v3 GOFLAGS=-tags=purego ;;
  v4) v4 ;;
  arm64) arm64 ;;
  *) echo "unknown build $b (v3, purego, v4, arm64)" >&2; exit 2 ;;
  esac
  echo "== same bits: $b: $((SECONDS - start)) s"
done
echo "same-bits checks (${builds[*]}): $((SECONDS - total)) s"
