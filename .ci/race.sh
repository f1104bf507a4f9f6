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
#
# sweep's four kill-and-resume searches take 184 of its 192 seconds under
# -race on a quiet 2-core machine (TestPrunedSearchResumesAfterKill alone
# 94 s): three passes of them ran past go test's 10-minute limit in CI.
# They run once; the rest of sweep, three times. -timeout is explicit so
# that a slow machine fails on a hang, not on the default limit.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
slow='^(TestPrunedSearchResumesAfterKill|TestPrunedSearchCheckpointsGo|TestSearchResumesAfterKill|TestPromotedTrialFromScratch)$'
go test -race -count=3 -timeout 30m -skip "$slow" \
  ./runs ./pipeline ./sweep ./sweep/batch ./sweep/procexec \
  ./internal/atomicfile ./internal/checkpoint ./internal/fault \
  ./optim ./train
go test -race -count=1 -timeout 30m -run "$slow" ./sweep
echo "race: $((SECONDS - start)) s"
