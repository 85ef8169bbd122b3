#!/usr/bin/env bash
# run_all.sh BUILD: run every test program in BUILD/tests, the layering
# check, the SystemDS parity tests, the MPI tests and the shared
# conformance suite (five configurations), then braid's DML tests; print
# one final line "N passed, M failed". Exit status 0 only when nothing
# failed.
#
# The suites are independent processes (each works in its own temporary
# folders), so they run side by side: BRAID_TEST_JOBS of them at once
# (default: the number of cores), the DML runner with as many workers.
# Their outputs are reported in a fixed order, each with its wall time;
# BRAID_TEST_JOBS=1 runs everything one after the other.
set -u
build=${1:-build}
jobs=${BRAID_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
export BRAID_TEST_JOBS=$jobs
# sanitizer builds: glibc's per-thread dlerror buffer is no leak of ours
export LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# PoCL (the CPU OpenCL device the GPU tests run on in CI): its
# single-threaded "basic" device; the pthread device's per-launch thread
# wake-ups make scripts of many tiny operators slow on a loaded machine
# (a real GPU's driver ignores this)
export POCL_DEVICES="${POCL_DEVICES:-basic}"
# the OpenMP spin setting braid's main makes for itself (cli/main.c), made
# here, so that each of the suites' thousands of braid runs starts once:
# braid sets it and executes itself again when it finds it unset (libgomp
# reads it when it loads), which loads every shared library twice (about
# 0.1 s of a plain run's start, 0.5-1 s under the sanitizers); the test
# programs, which link libgomp themselves, run with it too
[ -n "${OMP_WAIT_POLICY:-}${GOMP_SPINCOUNT:-}" ] || export GOMP_SPINCOUNT=20000
export BRAID="$(pwd)/$build/braid"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0

# --- running: unit KIND LABEL CMD... starts CMD in the background (at most
# $jobs at once) with its output in $tmp/N.out, its exit status in
# $tmp/N.rc and its wall seconds in $tmp/N.s
n=0; kinds=(); labels=()
unit() {
  local kind=$1 label=$2; shift 2
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  kinds[n]=$kind; labels[n]=$label
  ( t0=$(date +%s); "$@" > "$tmp/$n.out" 2>&1; echo $? > "$tmp/$n.rc"
    echo $(( $(date +%s) - t0 )) > "$tmp/$n.s" ) &
  n=$((n + 1))
}

# --- reporting. A test program's last "... N passed, M failed" line
# counts (no such line: one failure; a non-zero exit without failures:
# one failure), and its FAIL lines are shown. A suite (kind "suite")
# prints "LABEL: N passed, M failed" and its FAIL lines.
add() {   # add LINE: add the line's counts to the totals (no line: one failure)
  local p f
  p=$(echo "$1" | sed -E 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed.*/\2/')
  f=$(echo "$1" | sed -E 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed.*/\3/')
  [ -n "$1" ] || { p=0; f=1; }
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-1}))
}
# recap: each failed unit's name and why() lines, printed again just
# above the summary (CI shows the log's tail only)
recap=""
why() {   # why OUT: its first FAIL lines; a sanitizer report's start; else,
          # without FAIL lines, its last lines
  printf '%s\n' "$1" | grep -E '^FAIL' | head -n 3
  if printf '%s\n' "$1" | grep -qE '^==[0-9]+==ERROR|runtime error'; then
    printf '%s\n' "$1" | grep -m 1 -A 14 -E '^==[0-9]+==ERROR|runtime error'
  elif ! printf '%s\n' "$1" | grep -qE '^FAIL'; then
    printf '%s\n' "$1" | tail -n 8
  fi
}
report() {   # report N
  local out rc secs line f0=$fail
  out=$(cat "$tmp/$1.out"); rc=$(cat "$tmp/$1.rc"); secs=$(cat "$tmp/$1.s")
  report_unit "$1"
  [ "$fail" -eq "$f0" ] || recap="${recap}failed: ${labels[$1]} ($((fail - f0)))
$(why "$out")
"
}
report_unit() {   # report_unit N (report's body; out, rc, secs set)
  line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  case "${kinds[$1]}" in
  program)
    if [ -z "$line" ]; then
      printf '%s\n' "$out" | tail -n 20
      echo "${labels[$1]}: crashed or printed no summary (exit $rc)"
      fail=$((fail + 1)); return
    fi
    [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -E '^FAIL' | head -n 30
    echo "$line   [${secs} s]"
    add "$line"
    if [ "$rc" -ne 0 ] && [ "$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')" -eq 0 ]; then
      fail=$((fail + 1))
    fi ;;
  suite)
    printf '%s\n' "$out" | grep -E '^(FAIL|mpi tests: skipped)' | head -n 40
    echo "${labels[$1]}: $line   [${secs} s]"
    add "$line" ;;
  esac
}

# The cost model's machine constants for the mpi, parity, conformance and
# DML runs, pinned (as the C tests pin theirs, t_pin_machine): measured in a fresh cache
# while the other suites run, they come out several-fold low and pick
# other plans, and a plan-dependent Inf/NaN difference in stratstats
# (issue 23's note) then flips a parity output. These are this
# development machine's measured read, write, flops, gemm and vecmat.
pinned="4.07684e+10 3.07256e+10 5.60535e+09 6.16694e+10 3.40088e+10"

# --- the units (the longest first, so that the short ones fill the gaps)
# test_codegen, the longest program by far (about 5 minutes), starts first
[ -x "$build/tests/test_codegen" ] && unit program test_codegen "$build/tests/test_codegen"
# distributed execution under mpirun (tests/mpi; skipped without mpirun);
# its job counts are those of the plans the pinned constants pick (a
# fresh calibration that read memory slowly fused the mixed piggyback
# job's reduces differently)
[ -x tests/mpi/run.sh ] &&
  unit suite "mpi tests" env BRAID_CG_MACHINE="${BRAID_CG_MACHINE:-$pinned}" tests/mpi/run.sh "$build/braid"
for t in "$build"/tests/test_*; do
  [ "$t" != "$build/tests/test_codegen" ] && [ -x "$t" ] && unit program "$(basename "$t")" "$t"
done
# the layering of the folders (docs/DESIGN.md, "Layers")
unit program layers python3 tools/layers.py .
# the Makefile reads every object's dependencies (a header change rebuilds
# the benchmarks' and cli/main.o too)
unit program makedeps python3 tools/makedeps.py "$build"
# SystemDS parity: the library against SystemDS's algorithms' committed
# outputs, and the builtins' signatures against SystemDS's (tests/parity);
# synchronous codegen, as the DML tests below: a near tie decided by
# last-bit differences must not depend on compile timing
[ -x tests/parity/run.py ] &&
  unit suite "parity tests" env BRAID_CODEGEN_ASYNC=0 BRAID_CG_MACHINE="${BRAID_CG_MACHINE:-$pinned}" \
    tests/parity/run.py "$build/braid"
# SystemDS's builtin tests that have an R twin: the library against R's
# committed results, within the Java tests' tolerances (tests/parity/rtwins.py)
[ -x tests/parity/rtwins.py ] &&
  unit suite "R twin tests" env BRAID_CODEGEN_ASYNC=0 BRAID_CG_MACHINE="${BRAID_CG_MACHINE:-$pinned}" \
    tests/parity/rtwins.py run "$build/braid"
# SystemDS's binary-block files: hand-built files read, braid's writes
# decoded byte for byte, malformed files refused (tests/parity/sysbin.py)
[ -x tests/parity/sysbin.py ] &&
  unit suite "SystemDS binary-block files" tests/parity/sysbin.py "$build/braid"
# SystemDS's binary frame files: read from files built byte for byte,
# written byte for byte, malformed ones refused (tests/parity/sysframe.py)
[ -x tests/parity/sysframe.py ] &&
  unit suite "SystemDS binary frame files" tests/parity/sysframe.py "$build/braid"
# lineage(X): traces of small scripts against SystemDS's, worked out from
# its instructions' lineage code (tests/parity/lineage.py)
[ -x tests/parity/lineage.py ] &&
  unit suite "lineage traces" tests/parity/lineage.py "$build/braid"
# FusionStitching's explorer choosing the plans of every algorithm
# script (tests/dml alg_* cases), each plan checked for validity
# (BRAID_EXPLORER=0 leaves it out: .ci/run's sanitizer pass, where it
# repeats the DML suite's algorithm runs at ten times their plain cost
# while test_explore and test_fxselect cover the explorer's code)
[ -x tests/fx_algs.sh ] && [ "${BRAID_EXPLORER:-1}" != 0 ] &&
  unit suite "explorer over the algorithm scripts" env BRAID_CG_MACHINE="${BRAID_CG_MACHINE:-$pinned}" \
    tests/fx_algs.sh "$build/braid"
# the shared conformance suite (../shared/conformance), when present: with
# the default settings, with rewrites off, with the fuse-all heuristic and
# with compressed linear algebra forced on, with the GPU backend forced on
# (BRAID_CONF_MODES, space-separated, limits the modes: .ci/run's
# sanitizer pass runs default, compressed and gpu, its plain pass all)
conf="$(cd "$(dirname "$0")/../.." && pwd)/shared/conformance"
if [ -x "$conf/run.sh" ]; then
  bin="$(cd "$(dirname "$build/braid")" && pwd)/braid"
  here="$(pwd)"
  for mode in ${BRAID_CONF_MODES:-default rewrites_off codegen_fuse_all compressed gpu}; do
    if [ $mode = default ]; then cmd="$bin"
    else
      cmd="$(cd "$build" && pwd)/braid-$mode"
      printf '#!/bin/sh\nexec "%s" -config "%s" "$@"\n' "$bin" "$here/tests/dml/configs/$mode.xml" > "$cmd"
      chmod +x "$cmd"
    fi
    unit suite "conformance ($mode)" env BRAID_CG_MACHINE="${BRAID_CG_MACHINE:-$pinned}" sh -c 'cd "$1" && ./run.sh "$2"' sh "$conf" "$cmd"
  done
fi
wait
for ((i = 0; i < n; i++)); do report $i; done

# braid's own DML tests, with rewrites on (default) and off and with every
# configuration of tests/dml/configs; the runner keeps $jobs cases running
# synchronous codegen: with an empty kernel cache, asynchronous
# compilation lets two seeded calls of one script run different plans
# (fused or not, equal only to the last bits), which seeded-equality
# cases (alg_decisiontree) must not see; test_codegen covers async.
# BRAID_DML_CONFIGS (names of tests/dml/configs, space-separated; default
# all) limits the extra configurations: .ci/run's sanitizer pass runs
# compressed, its plain pass all of them
if [ -x tests/dml/run.sh ]; then
  want=" ${BRAID_DML_CONFIGS:-all} "
  extra=""
  for c in tests/dml/configs/rewrites_off.xml tests/dml/configs/*.xml; do
    name=$(basename "$c" .xml)
    case "$want" in *" all "*|*" $name "*) ;; *) continue ;; esac
    case "$extra" in *"/$name.xml"*) continue ;; esac
    extra="${extra:+$extra
}-config $(pwd)/$c"
  done
  kinds[n]=suite; labels[n]="dml tests"
  t0=$(date +%s)
  BRAID_CODEGEN_ASYNC=0 BRAID_CG_MACHINE="${BRAID_CG_MACHINE:-$pinned}" BRAID_DML_EXTRA_ARGS="$extra" \
    tests/dml/run.sh "$build/braid" > "$tmp/$n.out" 2>&1
  echo $? > "$tmp/$n.rc"; echo $(( $(date +%s) - t0 )) > "$tmp/$n.s"
  report $n
fi
[ -n "$recap" ] && printf '%s' "$recap" | grep -v '^$'
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
