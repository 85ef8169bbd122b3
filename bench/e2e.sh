#!/usr/bin/env bash
# End-to-end benchmark: braid's builtin algorithms vs NumPy/SciPy and
# scikit-learn and R on generated data (bench/e2e/run.py says what runs).
# Usage: bench/e2e.sh [--scale F] [--only REGEX]
# Installs the peers from Debian when missing (python3-numpy,
# python3-scipy, python3-sklearn, r-base-core, r-cran-matrix), builds
# braid (and bench/rates, the in-run read and dgemm rates behind each
# row's bound: braid / bound, docs/perf.md), runs every row and saves the table under bench/results/e2e-<date>.txt (and .json).
# bench/e2e/agree.sh (run separately) checks at a small scale that the NumPy and R
# peers compute what braid computes (same objective to rounding).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=/usr/bin/python3
if ! "$PY" -c "import numpy, scipy, sklearn" 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy python3-scipy python3-sklearn
fi
if ! Rscript -e 'library(Matrix)' >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq r-base-core r-cran-matrix
fi
make -j2 build/braid build/bench/rates kernels >/dev/null
BRAID_BENCH_PYTHON="$PY" "$PY" bench/e2e/run.py build/braid bench/results "$@"
