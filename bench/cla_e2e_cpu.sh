#!/usr/bin/env bash
# cla_e2e_cpu.sh [BRAID] [ROWS] [REPS] [DATA...]: end-to-end algorithms
# (l2svm, lmCG, glm, kmeans, multiLogReg) over compressible generated data
# with sysds.compressed.linalg false / true / auto and with compress(X) in
# the script (mode false), in one run, the modes alternated; one thread
# (-threads 1), measured as the process's CPU time (user + system), which a
# shared machine's load disturbs far less than wall time. Prints the best
# of REPS per mode and the ratio false / mode (above 1: compressed faster),
# and the -stats lines of the compressed modes (compressions,
# decompressions, operations run compressed). Not a test. ALGOS: a
# subset of the algorithms (default all five).
# DATA: airline (categorical and low-cardinality numeric, 12 columns),
# onehot (6 categorical columns one-hot encoded, 60 columns, sparse),
# lowprec (16 sensor columns at 1 decimal over a small range).
# kmeans runs with eps=1e-4 (it converges within max_iter=20 on airline at
# 200k rows; at the default 1e-6 it did not, and printed 0 in every mode).
set -eu
braid=${1:-build/braid}
rows=${2:-100000}
reps=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
datas=${*:-airline onehot lowprec}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/cla_data.sh"
cla_airline_dml "$rows" > "$dir/airline.dml"
cat > "$dir/onehot.dml" <<DML
n = $rows
X = matrix(0, rows=n, cols=0)
for (j in 1:6) {
  c = floor(rand(rows=n, cols=1, min=1, max=10.99, seed=10 + j))
  X = cbind(X, table(seq(1, n), c, n, 10))
}
y = (rowSums(X[, 1:3]) + rowSums(X[, 25:28]) > 0.5) * 2 - 1
DML
cat > "$dir/lowprec.dml" <<DML
n = $rows
X = round(10 * rand(rows=n, cols=16, min=0, max=2, seed=21)) / 10
y = (rowSums(X[, 1:4]) > 4) * 2 - 1
DML
for d in $datas; do
  printf 'write(X, "%s/%s.X", format="binary")\nwrite(y, "%s/%s.y", format="binary")\n' "$dir" "$d" "$dir" "$d" >> "$dir/$d.dml"
  "$braid" -f "$dir/$d.dml"
done
pre='X = read($X); y = read($y)'
cat > "$dir/l2svm.dml" <<DML
$pre
w = l2svm(X=X, Y=y, maxIterations=30, verbose=FALSE)
print(sum(w))
DML
cat > "$dir/lm.dml" <<DML
$pre
w = lmCG(X=X, y=y, maxi=30, tol=1e-12, verbose=FALSE)
print(sum(w))
DML
cat > "$dir/glm.dml" <<DML
$pre
B = glm(X=X, Y=(y + 1) / 2, dfam=2, link=2, moi=10, mii=10, verbose=FALSE)
print(sum(B))
DML
cat > "$dir/kmeans.dml" <<DML
X = read(\$X)
[C, Y] = kmeans(X=X, k=5, runs=1, max_iter=20, eps=1e-4, seed=7)
print(sum(C))
DML
cat > "$dir/mlogreg.dml" <<DML
$pre
B = multiLogReg(X=X, Y=(y + 3) / 2, maxi=10, maxii=10, verbose=FALSE)
print(sum(B))
DML
for a in l2svm lm glm kmeans mlogreg; do
  sed 's/^X = read(\$X)/X = compress(read($X))/' "$dir/$a.dml" > "$dir/${a}_c.dml"
done
for m in false auto true; do
  printf '<root><sysds.compressed.linalg>%s</sysds.compressed.linalg></root>\n' $m > "$dir/$m.xml"
done
modes="false compress auto true"
echo "cla_e2e_cpu: $rows rows, one thread, CPU time (user+sys) best of $reps, modes alternated"
for d in $datas; do
  echo "== $d"
  printf '%-8s %8s %8s %8s %8s  %7s %7s %7s\n' algo false compress auto true f/comp f/auto f/true
  for a in ${ALGOS:-l2svm lm glm kmeans mlogreg}; do
    declare -A best=([false]=999 [compress]=999 [auto]=999 [true]=999) res=()
    for r in $(seq 1 "$reps"); do
      for m in $modes; do
        s=$dir/$a.dml; c=false
        [ $m = compress ] && s=$dir/${a}_c.dml
        [ $m = auto ] || [ $m = true ] && c=$m
        /usr/bin/time -f '%U %S' -o "$dir/t" "$braid" -threads 1 -f "$s" -config "$dir/$c.xml" \
            -nvargs X="$dir/$d.X" y="$dir/$d.y" > "$dir/out" 2>&1
        t=$(awk '{print $1 + $2}' "$dir/t")
        [ "$(echo "$t < ${best[$m]}" | bc)" = 1 ] && best[$m]=$t
        res[$m]=$(tail -n 1 "$dir/out")
      done
    done
    printf '%-8s %8.2f %8.2f %8.2f %8.2f  %7.2f %7.2f %7.2f   (%s | %s | %s | %s)\n' $a ${best[false]} ${best[compress]} \
      ${best[auto]} ${best[true]} "$(echo "${best[false]} / ${best[compress]}" | bc -l)" \
      "$(echo "${best[false]} / ${best[auto]}" | bc -l)" "$(echo "${best[false]} / ${best[true]}" | bc -l)" \
      "${res[false]}" "${res[compress]}" "${res[auto]}" "${res[true]}"
  done
  if [ -n "${STATS:-}" ]; then
    for a in ${ALGOS:-l2svm lm glm kmeans mlogreg}; do
      echo "-- $d $a compress() -stats"
      "$braid" -threads 1 -stats -f "$dir/${a}_c.dml" -nvargs X="$dir/$d.X" y="$dir/$d.y" 2>&1 |
        grep -iE 'CLA|compress|decompress|^Total|recompil' | head -30
    done
  fi
done
