#!/usr/bin/env bash
# Cold versus warm kernel cache on the e2e benchmark's rows (docs/perf.md,
# "Cold runs"): bench/e2e/cold.py alternates runs with an empty kernel
# cache and with a filled one, several pairs per row, and reports the
# median wall-time difference with the cold runs' compiler processes,
# compile seconds and prebuilt-set loads (-stats).
# Usage: bench/e2e_cold.sh [--scale F] [--only REGEX] [--reps N] [--noset]
# Builds braid and its prebuilt kernel set first; saves the table under
# bench/results/e2e-cold-<date>.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
make -j2 build/braid kernels >/dev/null
/usr/bin/python3 bench/e2e/cold.py build/braid bench/results "$@"
