#!/bin/sh
# run.sh [SECONDS]: builds the fuzzers (clang, libFuzzer with
# AddressSanitizer and UndefinedBehaviorSanitizer incl. float-cast-overflow;
# sources compiled directly) and runs them for SECONDS in all (default 60):
# the DML front end (fuzz_parser.c) a third of the time, then every reader
# (fuzz_reader.c: text, mm, csv, libsvm, binary, frame csv, .mtd, config
# XML, binary frame) an equal share of the rest. Seeds: every .dml file of the
# repository and of the conformance suite; fuzz/seeds/<reader>/. New
# inputs go to build/fuzz/corpus[-<reader>], crashes to build/fuzz/crash-*.
# Prints the inputs each target ran and the total.
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
flags="-g -O1 -std=c11 -D_GNU_SOURCE -I. -I/usr/include/hdf5/serial -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow
  -fno-sanitize-recover=undefined,float-cast-overflow"
mkdir -p "$out/corpus" "$out/seeds" "$out/obj"
# objects once (rebuilt when the source, or any header, is newer: a
# header's changed struct compiled into only some objects gave false finds)
objs=""
hdr=$(ls -t ./*/*.h | head -n 1)
for f in base/*.c matrix/*.c io/*.c runtime/config.c gpu/profspec.c lang/*.c; do
  o="$out/obj/$(echo "$f" | tr / _).o"
  if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ fuzz/run.sh -nt "$o" ] || [ "$hdr" -nt "$o" ]; then
    # shellcheck disable=SC2086
    "$cc" $flags -c "$f" -o "$o"
  fi
  objs="$objs $o"
done
link() { # name, source, defines...
  n=$1 s=$2; shift 2
  # shellcheck disable=SC2086
  "$cc" $flags -fsanitize=fuzzer "$@" "$s" $objs -o "$out/$n" -L/usr/lib/"$(gcc -print-multiarch)"/hdf5/serial -lhdf5 -lcjson -lm -lpthread
}
link fuzz_parser fuzz/fuzz_parser.c
readers="text mm csv libsvm binary frame mtd config framebin"
i=1
for r in $readers; do
  link "fuzz_$r" fuzz/fuzz_reader.c -DREADER=$i
  i=$((i + 1))
done
conf=${BRAID_CONFORMANCE:-../shared/conformance}
n=0
for f in $(find . "$conf/cases" -name '*.dml' -not -path './build*' 2>/dev/null); do
  n=$((n + 1))
  cp "$f" "$out/seeds/$n.dml"
done
opts="-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$out/"
runs() { grep -E '^stat::number_of_executed_units' "$1" | awk '{print $2}'; }
total=0
ps=$((secs / 3)); [ "$ps" -ge 1 ] || ps=1
rs=$(( (secs - ps) / 9 )); [ "$rs" -ge 1 ] || rs=1
echo "fuzz: parser ($n seed files) for $ps s, each of 9 readers for $rs s"
# shellcheck disable=SC2086
"$out/fuzz_parser" -max_total_time="$ps" -max_len=16384 $opts "$out/corpus" "$out/seeds" > "$out/log-parser" 2>&1 ||
  { tail -n 40 "$out/log-parser"; exit 1; }
k=$(runs "$out/log-parser"); total=$((total + k)); echo "fuzz: parser: $k inputs"
for r in $readers; do
  mkdir -p "$out/corpus-$r"
  # shellcheck disable=SC2086
  "$out/fuzz_$r" -max_total_time="$rs" -max_len=65536 $opts "$out/corpus-$r" "fuzz/seeds/$r" > "$out/log-$r" 2>&1 ||
    { tail -n 40 "$out/log-$r"; exit 1; }
  k=$(runs "$out/log-$r"); total=$((total + k)); echo "fuzz: $r: $k inputs"
done
echo "fuzz: $total inputs in all, no finding"
