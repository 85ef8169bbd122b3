#!/bin/sh
# run.sh [SECONDS]: builds the DML front-end fuzzer (clang, libFuzzer with
# AddressSanitizer and UndefinedBehaviorSanitizer; base/ and lang/ sources
# compiled directly) and runs it for SECONDS (default 60). Seeds: every .dml
# file of the repository and of the conformance suite. New inputs go to
# build/fuzz/corpus, crashes to build/fuzz/crash-*.
set -e
cd "$(dirname "$0")/.."
secs=${1:-60}
out=build/fuzz
cc=${FUZZ_CC:-}
if [ -z "$cc" ]; then
  for c in clang-14 clang; do
    if command -v "$c" >/dev/null 2>&1; then cc=$c; break; fi
  done
fi
[ -n "$cc" ] || { echo "fuzz: clang not found" >&2; exit 1; }
mkdir -p "$out/corpus" "$out/seeds"
"$cc" -g -O1 -std=c11 -D_GNU_SOURCE -I. \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  fuzz/fuzz_parser.c \
  base/base.c base/ops.c base/arena.c base/diag.c \
  lang/lex.c lang/parse.c lang/load.c lang/validate.c lang/dump.c \
  -o "$out/fuzz_parser" -lm -lpthread
conf=${BRAID_CONFORMANCE:-../shared/conformance}
n=0
for f in $(find . "$conf/cases" -name '*.dml' -not -path './build*' 2>/dev/null); do
  n=$((n + 1))
  cp "$f" "$out/seeds/$n.dml"
done
echo "fuzz: $n seed files, running for $secs s"
exec "$out/fuzz_parser" -max_total_time="$secs" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" \
  "$out/corpus" "$out/seeds"
