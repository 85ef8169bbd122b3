#!/usr/bin/env bash
# Codegen overhead of the algorithm scripts of the DML tests with an empty
# and a warm on-disk plan cache, against codegen off (bench/codegen_cold.py
# documents the columns).
# Usage: bench/bench_codegen_cold.sh [BRAID [REPS [FILTER]]] [-- EXTRA ARGS]
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/codegen_cold.py" "$@"
