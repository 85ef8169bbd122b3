#!/usr/bin/env bash
# run_all.sh BUILD: run every test program in BUILD/tests, then the DML
# tests and the shared conformance suite; print one final line
# "N passed, M failed". Exit status 0 only when nothing failed.
set -u
build=${1:-build}
# sanitizer builds: glibc's per-thread dlerror buffer is no leak of ours
export LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# PoCL (the CPU OpenCL device the GPU tests run on in CI): its
# single-threaded "basic" device; the pthread device's per-launch thread
# wake-ups make scripts of many tiny operators slow on a loaded machine
# (a real GPU's driver ignores this)
export POCL_DEVICES="${POCL_DEVICES:-basic}"
pass=0; fail=0
# tally LABEL PATTERN: the summary line "N passed, M failed" of $out is
# printed as "LABEL: ..." after $out's lines matching PATTERN, and added
# to the totals (no summary line: one failure)
tally() {
  local line p f
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  printf '%s\n' "$out" | grep -E "$2" | head -n 40
  echo "$1: $line"
  p=$(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\1/')
  f=$(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed.*/\2/')
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-1}))
}
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  out=$(BRAID="$(pwd)/$build/braid" "$t" 2>&1); rc=$?
  line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  if [ -z "$line" ]; then
    printf '%s\n' "$out" | tail -n 20
    echo "$(basename "$t"): crashed or printed no summary (exit $rc)"
    fail=$((fail + 1)); continue
  fi
  [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -E '^FAIL' | head -n 30
  echo "$line"
  p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1/')
  f=$(echo "$line" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\2/')
  pass=$((pass + p)); fail=$((fail + f))
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then fail=$((fail + 1)); fi
done
# the layering of the folders (docs/DESIGN.md, "Layers")
out=$(python3 tools/layers.py . 2>&1); rc=$?
line=$(printf '%s\n' "$out" | tail -n 1)
[ $rc -ne 0 ] && printf '%s\n' "$out" | grep -E '^FAIL' | head -n 30
echo "$line"
p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\2/')
pass=$((pass + ${p:-0})); fail=$((fail + ${f:-1}))
# braid's own DML tests, with rewrites on (default) and off
if [ -x tests/dml/run.sh ]; then
  extra="-config $(pwd)/tests/dml/configs/rewrites_off.xml"
  for c in tests/dml/configs/*.xml; do
    case "$c" in *rewrites_off.xml) ;; *) extra="$extra
-config $(pwd)/$c" ;; esac
  done
  # synchronous codegen: with an empty kernel cache, asynchronous
  # compilation lets two seeded calls of one script run different plans
  # (fused or not, equal only to the last bits), which seeded-equality
  # cases (alg_decisiontree) must not see; test_codegen covers async
  out=$(BRAID_CODEGEN_ASYNC=0 BRAID_DML_EXTRA_ARGS="$extra" tests/dml/run.sh "$build/braid" 2>&1)
  tally "dml tests" '^FAIL'
fi
# SystemDS parity: the library against SystemDS's algorithms' committed
# outputs, and the builtins' signatures against SystemDS's (tests/parity)
if [ -x tests/parity/run.py ]; then
  # (synchronous codegen, as the DML tests: a near tie decided by
  # last-bit differences must not depend on compile timing)
  out=$(BRAID_CODEGEN_ASYNC=0 tests/parity/run.py "$build/braid" 2>&1)
  tally "parity tests" '^FAIL'
fi
# distributed execution under mpirun (tests/mpi; skipped without mpirun)
if [ -x tests/mpi/run.sh ]; then
  out=$(tests/mpi/run.sh "$build/braid" 2>&1)
  tally "mpi tests" '^(FAIL|mpi tests: skipped)'
fi
# the shared conformance suite (../shared/conformance), when present: with
# the default settings, with rewrites off, with the fuse-all heuristic and
# with compressed linear algebra forced on, with the GPU backend forced on
conf="$(cd "$(dirname "$0")/../.." && pwd)/shared/conformance"
if [ -x "$conf/run.sh" ]; then
  bin="$(cd "$(dirname "$build/braid")" && pwd)/braid"
  here="$(pwd)"
  for mode in default rewrites_off codegen_fuse_all compressed gpu; do
    if [ $mode = default ]; then cmd="$bin"
    else
      cmd="$(cd "$build" && pwd)/braid-$mode"
      printf '#!/bin/sh\nexec "%s" -config "%s" "$@"\n' "$bin" "$here/tests/dml/configs/$mode.xml" > "$cmd"
      chmod +x "$cmd"
    fi
    out=$(cd "$conf" && ./run.sh "$cmd" 2>&1)
    tally "conformance ($mode)" '^FAIL'
  done
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
