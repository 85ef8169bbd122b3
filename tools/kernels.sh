#!/usr/bin/env bash
# kernels.sh BUILD: the prebuilt kernel set (docs/perf.md), BUILD/kernels.
# Runs BUILD/braid over the e2e benchmark's algorithms (bench/e2e: L2SVM,
# MLogreg, GLM, KMeans, ALS-CG, AutoEncoder, lm) on small generated data of
# each shape class the benchmark uses (dense 100 columns, sparse 1000
# columns at 1%, tall 10 columns), synchronously compiling every fused
# operator into a fresh cache folder, then publishes that folder (objects,
# their sources and hashes, the machine constants) as BUILD/kernels. The
# generated C names no data size, so the operators of a run at full size
# are the same: braid loads them from BUILD/kernels when the user's own
# cache lacks them, and a cold cache compiles nothing on the critical path.
#
# kernels.sh --prune DIR: only the last step on a cache folder DIR (what
# test_machine checks): removes what must not travel into the set.
set -euo pipefail
# Removes from cache folder $1 what must not travel: temporaries, the
# collector's stamp, precompiled preludes (tens of MB, rebuilt per cache
# by the compiler), and every machine file (machine-*.txt) that is not
# final. The set's file stands in for a cold cache's own measurement, so
# it must be one braid accepts there (codegen/cost.c machine_final,
# prebuilt_machine): 5 values (older builds), or 7 whose rounds reached
# MEASURE_ROUNDS (4) and whose state is quiet (1) or settled quiet after
# busy rounds (-4 or below). A settled-busy file ("4 0": every
# measurement of the build's runs was busy, flops 6.6x below the quiet
# ones in one set made at load 20), one still settling or with rounds
# left is dropped: a cold cache measures for itself.
prune() {
  find "$1" -maxdepth 1 \( -name 'tmp.*' -o -name 'gc.stamp' -o -name 'prelude-*' \) -exec rm -rf {} +
  local f
  for f in "$1"/machine-*.txt; do
    [ -e "$f" ] || continue
    awk 'NR == 1 { ok = NF == 5 || (NF == 7 && $6 >= 4 && ($7 == 1 || $7 <= -4)) } END { exit !ok }' "$f" ||
      rm -f "$f"
  done
}
if [ "${1:-}" = --prune ]; then
  prune "$2"
  exit 0
fi
build=${1:-build}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
braid="$root/$build/braid"
out="$root/$build/kernels"
tmp="$root/$build/kernels.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
chmod 700 "$tmp"
# name n m sparsity iterations (a few iterations reach every loop body;
# GLM's sparse plan at the benchmark's size needs 50000 rows and the
# third iteration: checked by running the benchmark with an empty cache,
# which must start no compiler)
runs="
l2svm 4000 100 1.0 2
l2svm 4000 1000 0.01 2
l2svm 20000 10 1.0 2
mlogreg 4000 100 1.0 2
mlogreg 4000 1000 0.01 2
glm 4000 100 1.0 3
glm 50000 1000 0.01 3
glm 20000 10 1.0 3
kmeans 4000 100 1.0 2
kmeans 20000 10 1.0 2
als 1000 2000 0.01 2
autoencoder 2000 100 1.0 1
lm 4000 100 1.0 1
lm 4000 1000 0.01 1
lm 20000 10 1.0 1
"
# at braid's default thread count (the online processors, as braid
# counts them) and at the benchmark's 2: plans, and so operators, may
# differ with the threads, and each count has its own measured machine
# constants and AMULET share (machine-T.txt, amulet-share-T.txt), which a
# cold run at that count takes from the set instead of measuring
threads=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
[ "$threads" = 2 ] || threads="$threads 2"
for t in $threads; do
  echo "$runs" | while read -r alg n m sp it; do
    [ -n "$alg" ] || continue
    # its own cache only (BRAID_KERNELS=none: an older set must not stand
    # in for compiles), every compile finished before braid exits
    XDG_CACHE_HOME="$tmp" BRAID_KERNELS=none BRAID_CODEGEN_ASYNC=0 \
      "$braid" -f "$root/bench/e2e/$alg.dml" -threads "$t" \
      -nvargs n="$n" m="$m" sp="$sp" it="$it" seed=1 >/dev/null
  done
done
# only the finished entries travel (prune)
prune "$tmp/braid"
chmod -R go-w "$tmp/braid"
# swapped in by two renames: a braid running meanwhile finds the old set,
# the new one or none (then it compiles), never a half-written one
rm -rf "$out.old"
[ -e "$out" ] && mv "$out" "$out.old"
mv "$tmp/braid" "$out"
rm -rf "$tmp" "$out.old"
echo "kernels: $(find "$out" -name '*.so' | wc -l) operators in $out"
