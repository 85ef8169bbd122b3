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
set -euo pipefail
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
# only the finished entries travel: no temporaries, collector stamp or
# precompiled prelude (tens of MB, rebuilt per cache by the compiler)
find "$tmp/braid" -maxdepth 1 \( -name 'tmp.*' -o -name 'gc.stamp' -o -name 'prelude-*' \) -exec rm -rf {} +
chmod -R go-w "$tmp/braid"
# swapped in by two renames: a braid running meanwhile finds the old set,
# the new one or none (then it compiles), never a half-written one
rm -rf "$out.old"
[ -e "$out" ] && mv "$out" "$out.old"
mv "$tmp/braid" "$out"
rm -rf "$tmp" "$out.old"
echo "kernels: $(find "$out" -name '*.so' | wc -l) operators in $out"
