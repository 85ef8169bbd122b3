#!/usr/bin/env bash
# bench_rewrites.sh: each script of bench/rewrites with rewrites off
# (sysds.optlevel 0) and on (default), in one run; prints times and the
# speedup, and each script's compile time. Not a test.
set -u
cd "$(dirname "$0")/.."
make -s build/braid >/dev/null || exit 1
off=tests/dml/configs/rewrites_off.xml
now() { date +%s.%N; }
printf '%-14s %10s %10s %8s %12s\n' script off_s on_s speedup compile_ms
for f in bench/rewrites/*.dml; do
  n=$(basename "$f" .dml)
  t0=$(now); build/braid -f "$f" -config "$off" >/dev/null; t1=$(now)
  build/braid -f "$f" >/dev/null; t2=$(now)
  c=$(build/braid -f "$f" -stats 2>/dev/null | awk -F'\t+' '/compilation time/ {print $2}' | sed 's/ sec.//')
  awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v comp="$c" 'BEGIN {
    off = b - a; on = c - b;
    printf "%-14s %10.3f %10.3f %7.2fx %12.2f\n", n, off, on, off / on, comp * 1000 }'
done
