#!/usr/bin/env bash
# dist_scaling.sh [BRAID] [ROWS] [COLS] [REPS] [NETRATE]: strong scaling of L2SVM,
# KMeans and a 16-fold cross-validated lm as a remote parfor (cvlm: the
# folds on the ranks, the loop's plan shipped) over 1..4 MPI ranks
# (docs/dist.md). The memory budget is forced to
# a tenth of X, so X and its products run distributed; each line gives the
# best training time of REPS runs (the configurations alternate within a
# round), its ratio to the local run (plain braid, same data, same
# threads) and the bytes the distributed jobs sent. On a machine with
# fewer cores than ranks, ranks share cores (--oversubscribe): such a run
# shows the overhead of partitioning and messages, not speedup.
#
# The network's rate is pinned (NETRATE bytes/s, default 1e9, as the
# MPI tests do), so that the fusion plans do not follow a rate measured
# under load; set BRAID_CG_MACHINE to pin the machine constants too.
# After the timings, a table per algorithm and rank count sets the bytes
# each job type sent (-stats) beside the volume the plan's model
# predicted for those jobs (dist_volume, docs/dist.md) and their ratio,
# and one the fused operators' plan bytes sent beside those the fusion
# cost model priced and pricing every plan in full.
set -u
braid=${1:-build/braid}
rows=${2:-200000}; cols=${3:-20}; reps=${4:-3}; netrate=${5:-1e9}
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
budget=$((rows * cols * 8 / 10))
printf '<root><sysds.local.memory.budget>%s</sysds.local.memory.budget><sysds.dist.netrate>%s</sysds.dist.netrate></root>\n' \
  "$budget" "$netrate" > "$tmp/c.xml"
cores=$(nproc)
echo "# $rows x $cols, budget $budget bytes, network rate pinned at $netrate B/s, $cores cores, 1 thread per rank, best of $reps"
echo "# algo   ranks  train_s  vs_local  bytes_sent  jobs"
for algo in l2svm kmeans cvlm; do
  declare -A best=() bytes=() jobs=()
  for r in $(seq 1 "$reps"); do
    for np in 0 1 2 3 4; do
      if [ "$np" = 0 ]; then
        out=$("$braid" -threads 1 -f "$here/dist/$algo.dml" -args "$rows" "$cols" 2>&1)
      else
        out=$(mpirun --oversubscribe --bind-to none -np "$np" "$braid" -threads 1 -config "$tmp/c.xml" -stats \
              -f "$here/dist/$algo.dml" -args "$rows" "$cols" 2>&1)
      fi
      t=$(printf '%s\n' "$out" | sed -n 's/^train \([0-9.eE+-]*\) .*/\1/p')
      [ -z "$t" ] && { echo "$algo np=$np failed:"; printf '%s\n' "$out" | tail -n 5; continue; }
      if [ -z "${best[$np]:-}" ] || python3 -c "import sys; sys.exit(0 if $t < ${best[$np]} else 1)"; then best[$np]=$t; fi
      bytes[$np]=$(printf '%s\n' "$out" | sed -n 's/^Distributed jobs.*(\([0-9.]*\) sec, \([0-9]*\) bytes sent).*/\2/p')
      jobs[$np]=$(printf '%s\n' "$out" | sed -n 's/^Distributed jobs ([0-9]* ranks):\t\([0-9]*\) .*/\1/p')
      # per job type: name, bytes sent, bytes predicted (the last round's)
      [ "$np" != 0 ] && printf '%s\n' "$out" | awk -v a="$algo" -v n="$np" \
        '$3 == "jobs" && $5 == "sec" && $7 == "bytes" && $9 == "predicted" { print a, n, $1, $2, $6, $8 }' > "$tmp/vol.$algo.$np"
      # fused operator plans: bytes sent, priced by the cost model, priced in full
      [ "$np" != 0 ] && printf '%s\n' "$out" | sed -n "s/^  (fused operator plan bytes: \([0-9]*\) sent, \([0-9]*\) priced by the fusion cost model, \([0-9]*\) in full)\$/$algo $np \1 \2 \3/p" > "$tmp/plan.$algo.$np"
    done
  done
  for np in 0 1 2 3 4; do
    [ -z "${best[$np]:-}" ] && continue
    ratio=$(python3 -c "print('%.2f' % (${best[$np]} / ${best[0]}))")
    printf '%-8s %5s  %7.3f  %8s  %10s  %4s\n' "$algo" "$([ "$np" = 0 ] && echo local || echo "$np")" "${best[$np]}" "$ratio" "${bytes[$np]:--}" "${jobs[$np]:--}"
  done
  unset best bytes jobs
done
echo
echo "# communication per job type: bytes sent against the plan's predicted volume (last round)"
echo "# algo   ranks  type          jobs      sent_bytes  predicted_bytes  sent/predicted"
cat "$tmp"/vol.* 2>/dev/null | while read -r a n t j sent pred; do
  ratio=-
  [ "$pred" != - ] && ratio=$(python3 -c "print('%.3f' % ($sent / $pred) if $pred > 0 else '-')")
  printf '%-8s %5s  %-12s %5s  %14s  %15s  %14s\n' "$a" "$n" "$t" "$j" "$sent" "$pred" "$ratio"
done
echo
echo "# fused operator plans: bytes sent against the bytes the fusion cost model priced (the workers' plan cache's"
echo "# state) and against pricing every plan in full at every compile (before) (last round)"
echo "# algo   ranks  plan_sent  plan_priced  priced_in_full  sent/priced  sent/in_full"
cat "$tmp"/plan.* 2>/dev/null | while read -r a n sent pr full; do
  printf '%-8s %5s  %9s  %11s  %14s  %11s  %12s\n' "$a" "$n" "$sent" "$pr" "$full" \
    "$(python3 -c "print('%.3f' % ($sent / $pr) if $pr > 0 else '-')")" "$(python3 -c "print('%.3f' % ($sent / $full) if $full > 0 else '-')")"
done
