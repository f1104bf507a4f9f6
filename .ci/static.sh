#!/usr/bin/env bash
# A runner that needs no C library on the machine that runs it (compute
# nodes with an older glibc than the build host's): go-sqlite3 is cgo, so
# the binary is linked statically against the build host's libc.
#
#   .ci/static.sh build OUT   build the static runner into OUT
#   .ci/static.sh test        build it and run a small experiment with it in
#                             an empty chroot (no libc, no /proc, no /dev):
#                             the results database, the cache and the report
#                             all work there. Needs root (chroot) and libc.a
#                             (libc6-dev).
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
  CGO_ENABLED=1 go build -trimpath \
    -tags 'osusergo netgo sqlite_omit_load_extension' \
    -ldflags '-linkmode external -extldflags -static' \
    -o "$1" ./cmd/runner
}

case "${1:-}" in
build)
  [ -n "${2:-}" ] || { echo "usage: $0 build OUT" >&2; exit 2; }
  build "$2"
  ;;
test)
  [ "$(id -u)" = 0 ] || { echo "static.sh test: needs root (chroot); skipped" >&2; exit 0; }
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  build "$root/runner"
  if ldd "$root/runner" >/dev/null 2>&1; then
    echo "static.sh: $root/runner is dynamically linked" >&2; exit 1
  fi
  cat > "$root/experiments.toml" <<'TOML'
[experiments.small]
pipeline = "artificial"
[experiments.small.settings]
time_steps = 6
steps = 200
clip = 0.01
lr = 1.0
lr_s0 = 100.0
k1 = 20
[experiments.small.grid]
seed = [1]
[[experiments.small.variants]]
name = "gd"
[[experiments.small.variants]]
name = "goldstone"
gauge = "goldstone"
TOML
  out=$(chroot "$root" /runner --config /experiments.toml --workdir /work --db /results.db \
        --reports /reports --data-dir /data --experiment small --jobs 1 --quiet)
  echo "$out"
  case "$out" in
  *"run 1 finished: 2 trials: 2 done"*) ;;
  *) echo "static.sh: the static runner did not finish its run in the empty chroot" >&2; exit 1 ;;
  esac
  [ -s "$root/reports/small/run-1/index.html" ] || { echo "static.sh: no report" >&2; exit 1; }
  echo "static.sh: the static runner ran an experiment in an empty chroot"
  ;;
*)
  echo "usage: $0 build OUT | test" >&2; exit 2
  ;;
esac
