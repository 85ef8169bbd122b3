#!/usr/bin/env bash
# ipa.sh OLD NEW [n]: dynamic recompilations and their time, and total
# time, of library algorithms called on data read from files with .mtd,
# for two braid builds, alternated (best of 3 per build). Shows what
# compile-time sizes (.mtd, IPA specializations) save.
set -euo pipefail
old=$1 new=$2 n=${3:-5000}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/braid-ipa-XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$new" -f "$here/ipa/gen.dml" -nvargs n="$n" dir="$dir" >/dev/null
algs=(
  "glm-binomial|B = glm(X=read(\"$dir/X.csv\"), Y=read(\"$dir/yb.csv\"), dfam=2, link=3, verbose=FALSE)"
  "glm-poisson|B = glm(X=read(\"$dir/X.csv\"), Y=abs(read(\"$dir/y.csv\")), dfam=1, vpow=1, link=1, lpow=0, verbose=FALSE)"
  "steplm|[B, S] = steplm(X=read(\"$dir/X.csv\"), y=read(\"$dir/y.csv\"), verbose=FALSE)"
  "stratstats|S = stratstats(X=read(\"$dir/X.csv\"))"
  "multiLogReg|B = multiLogReg(X=read(\"$dir/X.csv\"), Y=read(\"$dir/yc.csv\"), verbose=FALSE)"
  "alsCG|[U, V] = alsCG(X=read(\"$dir/R.csv\"), rank=10, verbose=FALSE)"
  "kmeans|[C, Y] = kmeans(X=read(\"$dir/X.csv\"), k=5, seed=1)"
  "l2svm|w = l2svm(X=read(\"$dir/X.csv\"), Y=read(\"$dir/yb.csv\"), verbose=FALSE)"
  "lm|B = lm(X=read(\"$dir/X.csv\"), y=read(\"$dir/y.csv\"), verbose=FALSE)"
)
stat() { sed -n "s/^$1:[[:space:]]*\([0-9.]*\).*/\1/p" <<<"$2" | head -1; }
printf "%-14s %22s %22s %18s\n" algorithm "recompiled old/new" "recompile s old/new" "total s old/new"
for a in "${algs[@]}"; do
  name=${a%%|*} src=${a#*|}
  # the first output is used, so that no call is dead code
  v=$(sed -E 's/^\[?([A-Za-z]+).*/\1/' <<<"$src")
  printf '%s\nprint(sum(%s))\n' "$src" "$v" >"$dir/s.dml"
  declare -A best=()
  for r in 1 2 3; do
    for b in old new; do
      bin=$old; [ $b = new ] && bin=$new
      out=$("$bin" -f "$dir/s.dml" -stats 2>&1)
      rc=$(stat "HOP DAGs recompiled" "$out")
      rt=$(sed -n 's/^HOP DAG recompile time:[[:space:]]*\([0-9.]*\).*/\1/p' <<<"$out")
      tt=$(stat "Total elapsed time" "$out")
      best[$b.rc]=$rc
      if [ -z "${best[$b.t]:-}" ] || awk "BEGIN{exit !($tt < ${best[$b.t]})}"; then
        best[$b.t]=$tt; best[$b.rt]=$rt
      fi
    done
  done
  printf "%-14s %22s %22s %18s\n" "$name" "${best[old.rc]}/${best[new.rc]}" "${best[old.rt]}/${best[new.rt]}" \
    "${best[old.t]}/${best[new.t]}"
  unset best
done
