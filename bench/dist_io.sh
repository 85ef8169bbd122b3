#!/usr/bin/env bash
# dist_io.sh [BRAID] [ROWS] [COLS] [REPS]: parallel csv/text reads, part-file
# writes and the two-large-operand product (cpmm) against the single-node
# run (docs/dist.md). The budget is forced to a tenth of the data, so the
# reads, the write and the product run distributed on 2 and 4 ranks; each
# line gives the best wall time of REPS runs (configurations alternate
# within a round), its ratio to the local run and the bytes sent. Ranks
# share the machine's cores (--oversubscribe).
set -u
braid=${1:-build/braid}
rows=${2:-100000}; cols=${3:-20}; reps=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$braid" -s "X = rand(rows=$rows, cols=$cols, min=-1, max=1, seed=1)
write(X, \"$tmp/X.csv\", format=\"csv\")
write(rand(rows=$rows, cols=$cols, sparsity=0.2, seed=2), \"$tmp/S.txt\", format=\"text\")" || exit 1
budget=$((rows * cols * 8 / 10))
printf '<root><sysds.local.memory.budget>%s</sysds.local.memory.budget></root>\n' "$budget" > "$tmp/c.xml"
# each phase in its own block (a time() call has no data dependence: in
# one block it could run before the operations it should follow)
cat > "$tmp/io.dml" <<DML
t0 = time()
if (t0 > 0) {
  X = read("$tmp/X.csv")
  S = read("$tmp/S.txt")
  s = sum(X) + sum(S)
}
if (s != 0.5) { t1 = time() }
if (t1 > 0) { write(X * 2, "$tmp/out.csv", format="csv") }
if (t1 > 0) { W = t(S) }
if (ncol(W) > 0) { t2 = time() }
if (t2 > 0) { P = W %*% X; p = sum(P) }
if (p != 0.5) { t3 = time() }
print("times " + (t1 - t0) / 1e9 + " " + (t2 - t1) / 1e9 + " " + (t3 - t2) / 1e9 + " " + s + " " + p)
DML
echo "# $rows x $cols (csv $(du -h "$tmp/X.csv" | cut -f1), text $(du -h "$tmp/S.txt" | cut -f1)), budget $budget bytes, $(nproc) cores, best of $reps"
echo "# ranks  read_s  write_s  W%*%X_s  read_vs_local  write_vs_local  mm_vs_local  bytes_sent"
declare -A rd wr mm by
for r in $(seq 1 "$reps"); do
  for np in 0 2 4; do
    rm -rf "$tmp/out.csv" "$tmp/out.csv.mtd"
    if [ "$np" = 0 ]; then out=$("$braid" -threads 1 -f "$tmp/io.dml" 2>&1)
    else out=$(mpirun --oversubscribe --bind-to none -np "$np" "$braid" -threads 1 -config "$tmp/c.xml" -stats -f "$tmp/io.dml" 2>&1); fi
    set -- $(printf '%s\n' "$out" | sed -n 's/^times //p')
    [ $# -lt 3 ] && { echo "np=$np failed:"; printf '%s\n' "$out" | tail -n 5; continue; }
    better() { [ -z "${1:-}" ] || python3 -c "import sys; sys.exit(0 if $2 < $1 else 1)"; }
    better "${rd[$np]:-}" "$1" && rd[$np]=$1
    better "${wr[$np]:-}" "$2" && wr[$np]=$2
    better "${mm[$np]:-}" "$3" && mm[$np]=$3
    by[$np]=$(printf '%s\n' "$out" | sed -n 's/^Distributed jobs.*, \([0-9]*\) bytes sent).*/\1/p')
    [ "$np" != 0 ] && [ "$r" = 1 ] && printf '%s\n' "$out" | grep -E "^  (read-text|write|cpmm|rmm|mapmm|transpose) " | sed "s/^/# np $np: /"
  done
done
for np in 0 2 4; do
  [ -z "${rd[$np]:-}" ] && continue
  printf '%-6s %7.3f %8.3f %9.3f %14s %15s %12s %11s\n' "$([ $np = 0 ] && echo local || echo $np)" "${rd[$np]}" "${wr[$np]}" "${mm[$np]}" \
    "$(python3 -c "print('%.2f' % (${rd[$np]} / ${rd[0]}))")" "$(python3 -c "print('%.2f' % (${wr[$np]} / ${wr[0]}))")" \
    "$(python3 -c "print('%.2f' % (${mm[$np]} / ${mm[0]}))")" "${by[$np]:--}"
done
