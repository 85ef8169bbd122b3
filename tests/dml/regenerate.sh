#!/usr/bin/env bash
# Rebuild expected/<case>/ from ref/<case>.R with R (Debian: r-base-core).
# Usage: tests/dml/regenerate.sh [FILTER]   (FILTER: regex on case names)
# Also checks that every case has a reference script and vice versa.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
filter="${1:-}"
command -v Rscript >/dev/null || { echo "Rscript not found (apt-get install r-base-core)" >&2; exit 2; }
status=0
count=0
for f in ref/*.R; do
  name="$(basename "$f" .R)"
  case "$name" in _*) continue ;; esac
  if [ -n "$filter" ] && ! [[ "$name" =~ $filter ]]; then continue; fi
  if ! Rscript --vanilla "$f" >/dev/null; then
    echo "FAILED: $f" >&2
    status=1
  fi
  count=$((count + 1))
done
for c in cases/*.dml; do
  name="$(basename "$c" .dml)"
  [ -f "ref/$name.R" ] || { echo "no ref/$name.R for $c" >&2; status=1; }
done
for f in ref/*.R; do
  name="$(basename "$f" .R)"
  case "$name" in _*) continue ;; esac
  [ -f "cases/$name.dml" ] || { echo "no cases/$name.dml for $f" >&2; status=1; }
done
for d in expected/*/; do
  name="$(basename "$d")"
  [ -f "cases/$name.dml" ] || { echo "stale expected/$name (no case)" >&2; status=1; }
done
echo "regenerated $count case(s)"
exit $status
