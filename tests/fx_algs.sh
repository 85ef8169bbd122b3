#!/usr/bin/env bash
# FusionStitching's explorer over the DAGs of every algorithm script:
#   tests/fx_algs.sh BRAID
# Runs tests/dml's algorithm cases (alg_*, the builtins' scripts; not
# the alg_err_* cases, whose scripts stop at their argument checks) with the explorer choosing codegen's plans
# (tests/dml/fusion_stitching.xml), so each case's outputs, computed by
# the explorer's plans, are compared with the case's expected outputs
# (the reference every configuration meets). With BRAID_FX_COMPARE set,
# every DAG codegen optimizes is also compared under both selectors
# (codegen/fxselect.c cg_fx_log); tools/fx_table.py then fails on any
# invalid explorer plan (a fused kernel not connected, an opaque vertex
# fused, a cycle among kernels) and prints the totals of MPSkipEnum vs
# the explorer. Plan costs use the caller's BRAID_CG_MACHINE (run_all.sh
# pins it), results only are checked.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -eq 1 ] || { echo "usage: $0 BRAID" >&2; exit 2; }
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nexec "%s" -config "%s" "$@"\n' "$bin" "$here/tests/dml/fusion_stitching.xml" > "$tmp/braid-fx"
chmod +x "$tmp/braid-fx"
rc=0
BRAID_CODEGEN_ASYNC=0 BRAID_FX_COMPARE="$tmp/fx.tsv" "$here/tests/dml/run.sh" "$tmp/braid-fx" '^alg_(?!err_)' || rc=1
python3 "$here/tools/fx_table.py" "$tmp/fx.tsv" || rc=1
exit $rc
