#!/usr/bin/env bash
# cla_e2e.sh [BRAID] [ROWS]: end-to-end algorithms over an Airline-like
# table (categorical and low-cardinality numeric columns, generated in
# DML) with sysds.compressed.linalg false, auto and true, in one run,
# alternating the modes; prints each algorithm's best wall time per mode
# and the ratio to false. Not a test; the machine may be shared.
set -eu
braid=${1:-build/braid}
rows=${2:-200000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/gen.dml" <<DML
n = $rows
X = cbind(floor(rand(rows=n, cols=1, min=1, max=12.99, seed=1)), floor(rand(rows=n, cols=1, min=1, max=31.99, seed=2)),
          floor(rand(rows=n, cols=1, min=1, max=7.99, seed=3)), floor(rand(rows=n, cols=1, min=0, max=19.99, seed=4)),
          floor(rand(rows=n, cols=1, min=0, max=299.99, seed=5)), floor(rand(rows=n, cols=1, min=0, max=23.99, seed=6)),
          5 * floor(rand(rows=n, cols=4, min=0, max=5.99, seed=7)) * (rand(rows=n, cols=4, seed=8) > 0.6),
          rand(rows=n, cols=2, seed=9) > 0.95)
X = X / colMaxs(X)
y = (rowSums(X[, 7:10]) > 0.8) * 2 - 1
write(X, "$dir/X", format="binary")
write(y, "$dir/y", format="binary")
DML
"$braid" -f "$dir/gen.dml"
cat > "$dir/l2svm.dml" <<'DML'
X = read($X); y = read($y)
w = l2svm(X=X, Y=y, maxIterations=30, verbose=FALSE)
print(sum(w))
DML
cat > "$dir/lm.dml" <<'DML'
X = read($X); y = read($y)
w = lmCG(X=X, y=y, maxi=30, verbose=FALSE)
print(sum(w))
DML
cat > "$dir/kmeans.dml" <<'DML'
X = read($X)
[C, Y] = kmeans(X=X, k=5, runs=1, max_iter=20, seed=7)
print(sum(C))
DML
cat > "$dir/mlogreg.dml" <<'DML'
X = read($X); y = read($y)
B = multiLogReg(X=X, Y=(y + 3) / 2, maxi=10, maxii=10, verbose=FALSE)
print(sum(B))
DML
for m in false auto true; do
  printf '<root><sysds.compressed.linalg>%s</sysds.compressed.linalg></root>\n' $m > "$dir/$m.xml"
done
echo "cla_e2e: $rows rows x 12 columns, best of 3 (modes alternated); machine possibly shared"
printf '%-10s %10s %10s %10s %8s %8s\n' algorithm false auto true f/auto f/true
for a in l2svm lm kmeans mlogreg; do
  declare -A best=([false]=999 [auto]=999 [true]=999)
  for r in 1 2 3; do
    for m in false auto true; do
      t0=$(date +%s.%N)
      out=$("$braid" -f "$dir/$a.dml" -config "$dir/$m.xml" -nvargs X="$dir/X" y="$dir/y" 2>&1 | tail -n 1)
      t=$(echo "$(date +%s.%N) - $t0" | bc)
      [ "$(echo "$t < ${best[$m]}" | bc)" = 1 ] && best[$m]=$t
      eval "res_$m=\$out"
    done
  done
  printf '%-10s %10.3f %10.3f %10.3f %8.2f %8.2f   (results: %s / %s / %s)\n' $a ${best[false]} ${best[auto]} ${best[true]} \
    "$(echo "${best[false]} / ${best[auto]}" | bc -l)" "$(echo "${best[false]} / ${best[true]}" | bc -l)" "$res_false" "$res_auto" "$res_true"
done
