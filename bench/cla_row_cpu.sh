#!/usr/bin/env bash
# cla_row_cpu.sh [BRAID] [ROWS] [REPS] [OTHER]: the inner steps of l2svm
# (X %*% s; t(X) %*% (slack * Y) with slack from the labels and X w) and
# kmeans (distances, argmin, t(P) %*% X) over an Airline-like X (12
# categorical and low-cardinality columns), 20 iterations each, one
# thread, as process CPU time (user + system, /usr/bin/time):
#   ULA    sysds.compressed.linalg=false (the Row plans over X);
#   CLA    =true (X compressed at the loop's entry; the Row plans over
#          the compressed X: products looked up, q per tuple);
#   NOROW  =true, the same binary with BRAID_CG_CLA_ROW=0: the plan the
#          planner takes without Row operators over a compressed main
#          input (l2svm: compressed X %*% s and tmm beside Cell operators);
#   OTHER  =true with another braid binary (say one before a change: its
#          plan over the compressed X), when given.
# The modes alternate, REPS rounds after one that fills the kernel
# cache (its C compiles would count as CPU); prints the best CPU of each and the
# ratios ULA / mode (above 1: faster than uncompressed), the load
# average, and each compressed mode's -stats CLA lines. Not a test.
set -eu
braid=${1:-build/braid}
rows=${2:-200000}
reps=${3:-3}
other=${4:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/cla_data.sh"
data="$(cla_airline_dml "$rows")
Y = y"
cat > "$dir/l2svm.dml" <<DML
$data
w = matrix(0, rows=ncol(X), cols=1)
s = t(X) %*% Y
Xw = matrix(0, rows=n, cols=1)
for (i in 1:20) {
  Xs = X %*% s
  Xw = Xw + 0.01 * Xs
  slack = 1 - Y * Xw
  slack = (slack > 0) * slack
  g = t(X) %*% (slack * Y) - w
  w = w + 0.01 * s
  s = g / sqrt(sum(g ^ 2))
}
print("RESULT " + sum(w))
DML
cat > "$dir/kmeans.dml" <<DML
$data
C = X[1:5, ] + 0.01
for (i in 1:20) {
  D = -2 * (X %*% t(C)) + t(rowSums(C ^ 2))
  P = (D <= rowMins(D))
  P = P / rowSums(P)
  C = (t(P) %*% X) / t(colSums(P) + 1)
}
print("RESULT " + sum(C))
DML
printf '<root><sysds.compressed.linalg>false</sysds.compressed.linalg></root>\n' > "$dir/false.xml"
printf '<root><sysds.compressed.linalg>true</sysds.compressed.linalg></root>\n' > "$dir/true.xml"
modes="ULA CLA NOROW"
[ -n "$other" ] && modes="$modes OTHER"
echo "cla_row_cpu: $rows rows x 12, 20 iterations, one thread, best of $reps alternated rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
for alg in l2svm kmeans; do
  declare -A best=()
  for r in $(seq 0 "$reps"); do   # round 0 warms the kernel cache (not timed)
    for m in $modes; do
      b=$braid cfg=true row=1
      [ "$m" = ULA ] && cfg=false
      [ "$m" = NOROW ] && row=0
      [ "$m" = OTHER ] && b=$other
      BRAID_CG_CLA_ROW=$row /usr/bin/time -f "%U %S" -o "$dir/t" "$b" -threads 1 -f "$dir/$alg.dml" -config "$dir/$cfg.xml" -stats \
        > "$dir/out.$m" 2>&1
      t=$(awk '{print $1 + $2}' "$dir/t")
      [ "$r" = 0 ] && continue
      if [ -z "${best[$m]:-}" ] || awk -v a="$t" -v b="${best[$m]}" 'BEGIN{exit !(a < b)}'; then best[$m]=$t; fi
    done
  done
  line="$alg:"
  for m in $modes; do
    line="$line $m $(printf %.2f "${best[$m]}") s"
    [ "$m" != ULA ] && line="$line (ULA/$m $(awk -v a="${best[ULA]}" -v b="${best[$m]}" 'BEGIN{printf "%.2f", a / b}'))"
    line="$line,"
  done
  echo "${line%,}"
  for m in $modes; do
    echo "  $m: $(grep RESULT "$dir/out.$m")"
    [ "$m" != ULA ] && grep -E "^CLA (compressions|decompressions|compressed operations)" "$dir/out.$m" | sed 's/^/    /'
  done
  unset best
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
