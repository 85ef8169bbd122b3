#!/usr/bin/env bash
# Agreement check of the benchmark's NumPy and R peers with braid at a
# small scale: bench/e2e/agree.dml draws the data (and the initial factors /
# weights / row order the builtins take), runs braid's builtin with the
# benchmark's parameters and writes everything to a temporary folder;
# `agree.py` and `peers.R agree` rerun the NumPy and R peers on the same
# inputs and print both objectives and the largest difference of the
# results. Exits with status 1 on disagreement.
# Usage: bench/e2e/agree.sh [BRAID]     (default build/braid)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "${1:-build/braid}" "$tmp/braid"    # a snapshot: make may relink build/braid meanwhile
BRAID="$tmp/braid"
status=0
# alg n m sp it
while read -r alg n m sp it; do
  d="$tmp/$alg-$sp"
  mkdir -p "$d"
  "$BRAID" -f bench/e2e/agree.dml -threads 2 -nvargs alg="$alg" dir="$d" n="$n" m="$m" \
    sp="$sp" it="$it" seed=7 >/dev/null
  "${BRAID_BENCH_PYTHON:-/usr/bin/python3}" bench/e2e/agree.py "$alg" "$d" "$sp" "$it" || status=1
  # the R peer of glm is glm.fit (IRLS, a different algorithm): not compared
  [ "$alg" = glm ] || Rscript bench/e2e/peers.R agree "$alg" "$d" "$sp" "$it" || status=1
done <<'ROWS'
l2svm 2000 20 1.0 10
l2svm 2000 200 0.05 10
mlogreg 2000 20 1.0 3
mlogreg 2000 200 0.05 3
glm 2000 20 1.0 3
glm 2000 200 0.05 3
als 500 200 0.1 3
autoencoder 1000 30 1.0 2
ROWS
exit $status
