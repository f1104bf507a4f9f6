#!/usr/bin/env bash
# The race detector (issue 28) over the packages whose code runs
# concurrently: the results store's batching writer and its readers (runs),
# the DAG runner (pipeline), the sweep's recorder, resume and ownership
# (sweep), the batch file protocol, the atomic writers and checkpoints, the
# optimizers' worker pool (optim) and the training loop (train),
# three times each, so that an ordering that only sometimes happens gets
# three chances. The whole module under -race (go test -race ./..., about
# 12 minutes here at -count=1; sweep/slurmexec alone 7.5 of them) is run
# by hand before a submission, not in CI, whose time it would double.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
go test -race -count=3 \
  ./runs ./pipeline ./sweep ./sweep/batch ./sweep/procexec \
  ./internal/atomicfile ./internal/checkpoint ./internal/fault \
  ./optim ./train
echo "race: $((SECONDS - start)) s"
