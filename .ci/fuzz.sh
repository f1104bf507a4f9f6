#!/usr/bin/env bash
# The fuzz targets of the parsers of input from elsewhere (issue 29): each
# runs for a few seconds (FUZZTIME, default 3s) on top of its seed corpus,
# which plain go test runs too. A failure leaves the crasher under the
# package's testdata/fuzz/<target>/; fix the parser and keep the input as
# a seed (f.Add) with a comment saying what it once did.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-3s}
start=$SECONDS
targets=(
  "./formats/corpus FuzzScanCSVFields FuzzParseTotals FuzzParseYear"
  "./formats/ratings FuzzParseColumn FuzzParseDelimiter FuzzParquetConverter"
  "./stages/movielens FuzzParseMD5 FuzzReadRatingsText"
  "./trialio FuzzReadNpyHeader"
  "./runs FuzzJSONValue"
  "./sweep/batch FuzzNum"
  "./internal/slurm FuzzParseQueue FuzzParseJobID"
  "./sweep/slurmexec FuzzParseMem FuzzParseTime"
  "./report/claims FuzzDecode"
  "./internal/compressed FuzzDetect"
)
for line in "${targets[@]}"; do
  read -r pkg names <<<"$line"
  for name in $names; do
    go test -run XXX -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
echo "fuzz: $((SECONDS - start)) s"
