#!/usr/bin/env bash
# dist_scaling.sh [BRAID] [ROWS] [COLS] [REPS] [NETRATE]: strong scaling of L2SVM,
# KMeans and a 16-fold cross-validated lm as a remote parfor (cvlm: the
# folds on the ranks, the loop's plan shipped) over 1..4 MPI ranks
# (docs/dist.md), and 4 ranks over two simulated machines ("4/2h": ranks
# 0-1 and 2-3 on two machines, messages over TCP instead of shared
# memory, so braid's rank watch and heartbeat see two machines).
# The two machines are two network namespaces joined by a veth pair
# (run as root, `ip netns`; ranks 2-3 also get a host name of their
# own, unshare -u, and mpirun starts them through an agent that enters
# their namespace, as ssh would log in); NETNS=0, or where namespaces
# cannot be made, two host entries of the loopback instead, ranks 2-3
# given a host of their own by BRAID_HOST_ID. The header says which.
# ALGOS="l2svm kmeans" runs a subset. The memory budget is forced to
# a tenth of X, so X and its products run distributed; each line gives the
# best training time of REPS runs (the configurations alternate within a
# round), its ratio to the local run (plain braid, same data, same
# threads), the least process CPU of the whole run (user + system of
# mpirun and every rank, /usr/bin/time; MPI's waits poll, so a rank
# waiting for another burns CPU), the bytes the distributed jobs sent,
# and the largest relative difference of the printed results (the model's
# sum, and the data's) from the local run's. On a machine with
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
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # (a pyenv shim costs seconds a call under load)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
nsa=braid-$$-a nsb=braid-$$-b netns= etcns=
[ -d /etc/netns ] || etcns=1   # made here: removed at exit
ns_down() {
  ip netns del "$nsa" 2>/dev/null; ip netns del "$nsb" 2>/dev/null; ip link del "v$$a" 2>/dev/null
  rm -rf "/etc/netns/$nsa" "/etc/netns/$nsb"
  [ -n "$etcns" ] && rmdir /etc/netns 2>/dev/null
  netns=
}
cleanup() {
  [ -n "$netns" ] && ns_down
  rm -rf "$tmp"
}
trap cleanup EXIT
# two machines: namespaces nsa (10.77.0.1: mpirun, ranks 0-1) and nsb
# (10.77.0.2: ranks 2-3) over a veth pair; each namespace's /etc/hosts
# names both, and its resolv.conf has no server (lookups fail at once
# instead of timing out on a name server it cannot reach)
netns_up() {
  [ "${NETNS:-1}" = 0 ] && { why="NETNS=0"; return 1; }
  [ "$(id -u)" = 0 ] || { why="not root"; return 1; }
  ip netns add "$nsa" 2>"$tmp/nserr" || { why="ip netns add: $(head -c 200 "$tmp/nserr")"; return 1; }
  netns=1
  ip netns add "$nsb" && ip link add "v$$a" type veth peer name "v$$b" 2>"$tmp/nserr" &&
    ip link set "v$$a" netns "$nsa" && ip link set "v$$b" netns "$nsb" &&
    ip -n "$nsa" addr add 10.77.0.1/24 dev "v$$a" && ip -n "$nsb" addr add 10.77.0.2/24 dev "v$$b" &&
    ip -n "$nsa" link set lo up && ip -n "$nsb" link set lo up &&
    ip -n "$nsa" link set "v$$a" up && ip -n "$nsb" link set "v$$b" up ||
    { why="veth pair: $(head -c 200 "$tmp/nserr")"; return 1; }
  for n in "$nsa" "$nsb"; do
    mkdir -p "/etc/netns/$n" &&
      printf '127.0.0.1 localhost %s\n10.77.0.1 braid-bench-a\n10.77.0.2 braid-bench-b\n' "$(hostname)" > "/etc/netns/$n/hosts" &&
      printf 'options timeout:1 attempts:1\n' > "/etc/netns/$n/resolv.conf" || { why="/etc/netns/$n"; return 1; }
  done
  # mpirun's launch agent: "agent HOST COMMAND..." runs COMMAND in nsb
  # under the host name braid-bench-b
  printf '#!/bin/sh\nshift\nexec ip netns exec %s unshare -u sh -c %s sh "$@"\n' "$nsb" \
    "'hostname braid-bench-b; exec sh -c \"\$*\"'" > "$tmp/agent" && chmod +x "$tmp/agent"
  ip netns exec "$nsa" timeout 120 mpirun --oversubscribe --mca plm_rsh_agent "$tmp/agent" \
    --mca oob_tcp_if_include 10.77.0.0/24 --host 10.77.0.1:1,10.77.0.2:1 -np 2 hostname > "$tmp/nsout" 2>&1 &&
    [ "$(sort "$tmp/nsout" | tr '\n' ' ')" = "$(printf '%s\n' braid-bench-b "$(hostname)" | sort | tr '\n' ' ')" ] ||
    { why="mpirun across the namespaces: $(tr '\n' ' ' < "$tmp/nsout" | head -c 300)"; return 1; }
}
why=
if netns_up; then
  hosts="two network namespaces joined by a veth pair (10.77.0.1-2), ranks 2-3 under their own host name"
else
  hosts="loopback host entries, ranks 2-3 with BRAID_HOST_ID (network namespaces not used: $why)"
  [ -n "$netns" ] && ns_down
fi
budget=$((rows * cols * 8 / 10))
printf '<root><sysds.local.memory.budget>%s</sysds.local.memory.budget><sysds.dist.netrate>%s</sysds.dist.netrate></root>\n' \
  "$budget" "$netrate" > "$tmp/c.xml"
cores=$(nproc)
echo "# $rows x $cols, budget $budget bytes, network rate pinned at $netrate B/s, $cores cores, 1 thread per rank, best of $reps"
echo "# load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# 4/2h: $hosts"
echo "# algo   ranks  train_s  vs_local   cpu_s  cpu_vs_local  bytes_sent  jobs  result_reldiff"
confs="0 1 2 3 4 4h"
for algo in ${ALGOS:-l2svm kmeans cvlm}; do
  declare -A best=() bytes=() jobs=() cpu=() check=()
  for r in $(seq 1 "$reps"); do
    for np in $confs; do
      args=(-threads 1 -config "$tmp/c.xml" -stats -f "$here/dist/$algo.dml" -args "$rows" "$cols")
      if [ "$np" = 0 ]; then
        /usr/bin/time -f '%U %S' -o "$tmp/time" "$braid" -threads 1 -f "$here/dist/$algo.dml" -args "$rows" "$cols" > "$tmp/out" 2>&1
      elif [ "$np" = 4h ] && [ -n "$netns" ]; then
        /usr/bin/time -f '%U %S' -o "$tmp/time" ip netns exec "$nsa" mpirun --oversubscribe --bind-to none \
          --mca plm_rsh_agent "$tmp/agent" --mca oob_tcp_if_include 10.77.0.0/24 --mca btl tcp,self \
          --mca btl_tcp_if_include 10.77.0.0/24 --host 10.77.0.1:2,10.77.0.2:2 -np 4 "$braid" "${args[@]}" > "$tmp/out" 2>&1
      elif [ "$np" = 4h ]; then
        /usr/bin/time -f '%U %S' -o "$tmp/time" mpirun --oversubscribe --bind-to none --mca btl tcp,self \
          --host localhost:2,127.0.0.1:2 -np 2 "$braid" "${args[@]}" \
          : -np 2 -x BRAID_HOST_ID=bench-host-2 "$braid" "${args[@]}" > "$tmp/out" 2>&1
      else
        /usr/bin/time -f '%U %S' -o "$tmp/time" mpirun --oversubscribe --bind-to none -np "$np" "$braid" "${args[@]}" \
          > "$tmp/out" 2>&1
      fi
      out=$(cat "$tmp/out")
      t=$(printf '%s\n' "$out" | sed -n 's/^train \([0-9.eE+-]*\) .*/\1/p')
      [ -z "$t" ] && { echo "$algo np=$np failed:"; printf '%s\n' "$out" | tail -n 5; continue; }
      if [ -z "${best[$np]:-}" ] || "$py" -c "import sys; sys.exit(0 if $t < ${best[$np]} else 1)"; then best[$np]=$t; fi
      c=$(awk '{ print $1 + $2 }' "$tmp/time")
      if [ -z "${cpu[$np]:-}" ] || "$py" -c "import sys; sys.exit(0 if $c < ${cpu[$np]} else 1)"; then cpu[$np]=$c; fi
      check[$np]=$(printf '%s\n' "$out" | sed -n 's/^train [^ ]* check \(.*\)$/\1/p')
      [ "$np" = 4h ] && ! grep -q "^  rank watch: .*; 1 other machines reporting$" "$tmp/out" &&
        echo "# $algo 4/2h: the ranks did not see two machines: $(grep 'rank watch' "$tmp/out")"
      bytes[$np]=$(printf '%s\n' "$out" | sed -n 's/^Distributed jobs.*(\([0-9.]*\) sec, \([0-9]*\) bytes sent).*/\2/p')
      jobs[$np]=$(printf '%s\n' "$out" | sed -n 's/^Distributed jobs ([0-9]* ranks):\t\([0-9]*\) .*/\1/p')
      # per job type: name, bytes sent, bytes predicted (the last round's)
      [ "$np" != 0 ] && printf '%s\n' "$out" | awk -v a="$algo" -v n="$np" \
        '$3 == "jobs" && $5 == "sec" && $7 == "bytes" && $9 == "predicted" { print a, n, $1, $2, $6, $8 }' > "$tmp/vol.$algo.$np"
      # fused operator plans: bytes sent, priced by the cost model, priced in full
      [ "$np" != 0 ] && printf '%s\n' "$out" | sed -n "s/^  (fused operator plan bytes: \([0-9]*\) sent, \([0-9]*\) priced by the fusion cost model, \([0-9]*\) in full)\$/$algo $np \1 \2 \3/p" > "$tmp/plan.$algo.$np"
    done
  done
  for np in $confs; do
    [ -z "${best[$np]:-}" ] && continue
    ratio=$("$py" -c "print('%.2f' % (${best[$np]} / ${best[0]}))")
    cratio=$("$py" -c "print('%.2f' % (${cpu[$np]} / ${cpu[0]}))")
    diff=$("$py" -c "
a = '${check[0]:-}'.split(); b = '${check[$np]:-}'.split()
print('%.1e' % max(abs(float(x) - float(y)) / max(abs(float(x)), 1e-300) for x, y in zip(a, b)) if a and len(a) == len(b) else '-')")
    name=$np
    [ "$np" = 0 ] && name=local
    [ "$np" = 4h ] && name=4/2h
    printf '%-8s %5s  %7.3f  %8s  %6.2f  %12s  %10s  %4s  %14s\n' "$algo" "$name" "${best[$np]}" "$ratio" "${cpu[$np]}" "$cratio" \
      "${bytes[$np]:--}" "${jobs[$np]:--}" "$diff"
  done
  unset best bytes jobs cpu check
done
echo
echo "# communication per job type: bytes sent against the plan's predicted volume (last round)"
echo "# algo   ranks  type          jobs      sent_bytes  predicted_bytes  sent/predicted"
cat "$tmp"/vol.* 2>/dev/null | while read -r a n t j sent pred; do
  ratio=-
  [ "$pred" != - ] && ratio=$("$py" -c "print('%.3f' % ($sent / $pred) if $pred > 0 else '-')")
  printf '%-8s %5s  %-12s %5s  %14s  %15s  %14s\n' "$a" "$n" "$t" "$j" "$sent" "$pred" "$ratio"
done
echo
echo "# fused operator plans: bytes sent against the bytes the fusion cost model priced (the workers' plan cache's"
echo "# state) and against pricing every plan in full at every compile (before) (last round)"
echo "# algo   ranks  plan_sent  plan_priced  priced_in_full  sent/priced  sent/in_full"
cat "$tmp"/plan.* 2>/dev/null | while read -r a n sent pr full; do
  printf '%-8s %5s  %9s  %11s  %14s  %11s  %12s\n' "$a" "$n" "$sent" "$pr" "$full" \
    "$("$py" -c "print('%.3f' % ($sent / $pr) if $pr > 0 else '-')")" "$("$py" -c "print('%.3f' % ($sent / $full) if $full > 0 else '-')")"
done
