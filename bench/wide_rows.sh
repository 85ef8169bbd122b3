#!/bin/sh
# wide_rows.sh [BUILD=build] [OUT]: the wide-row sweep (bench_wide_rows.c)
# at 1 and 2 threads, each width's fused and unfused plans alternated in
# one process, process CPU; the helpers' pinned machine constants, so the
# cost-based column is reproducible. Records the load before each run.
B=${1:-build}
OUT=${2:-/dev/stdout}
export BRAID_CG_MACHINE="${BRAID_CG_MACHINE:-4.07684e+10 3.07256e+10 5.60535e+09 6.16694e+10 3.40088e+10}"
export GOMP_SPINCOUNT=20000
for t in 1 2; do
    echo "# $(date -u '+%F %T') load $(cut -d' ' -f1-3 /proc/loadavg) $(nproc) cores"
    "$B/bench/bench_wide_rows" "$t" "${REPS:-4}" "${PASSES:-20}" "${WIDTHS:-250,500,1000,2000,4000,8000}"
    echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)"
done >"$OUT"
