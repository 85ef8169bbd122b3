#!/bin/sh
# pool_api_cli.sh: process CPU of one script through the CLI (build/braid,
# which sets mallopt) and through the embedding API (bench_embed_run:
# braid_run, glibc's default malloc settings), alternated ROUNDS times,
# with the load. For the library's buffer pools (docs/DESIGN.md "Buffer
# pools"); repeated runs of one prepared script are bench_wide_rows's
# case (BENCH_NO_MALLOPT=1).
# Usage: bench/pool_api_cli.sh [ROUNDS=3] [ROWS=80000] [COLS=250] [PASSES=100]
set -e
cd "$(dirname "$0")/.."
rounds=${1:-3}
make -s build/braid build/bench/bench_embed_run
export GOMP_SPINCOUNT=20000
cfg=bench/e2e/nocodegen.xml
echo "# load $(cut -d' ' -f1-3 /proc/loadavg); 1 thread, codegen off; user+sys seconds"
i=0
while [ $i -lt "$rounds" ]; do
    /usr/bin/time -f "cli %U %S" build/braid -config $cfg -threads 1 -f bench/pool_hinge.dml \
        -args "${2:-80000}" "${3:-250}" "${4:-100}" >/dev/null
    /usr/bin/time -f "api %U %S" build/bench/bench_embed_run bench/pool_hinge.dml $cfg 1 \
        "${2:-80000}" "${3:-250}" "${4:-100}" >/dev/null
    i=$((i + 1))
done 2>&1 | awk '{print $1, $2 + $3}'
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
