#!/bin/bash
# bench/gpu_check.sh [LOGDIR]: braid's GPU checks on a machine with a real
# OpenCL GPU (the device machine of bench/results/gpu-*.txt): the device's
# facts and rates (bench/clprobe), what bounds a stitched row kernel
# (bench/clrows), PyTorch's eager kernels for the same layers
# (bench/torch_stitch.py, where python3 has torch and a CUDA device),
# bench_stitch as built, with warp shuffles (BRAID_GPU_SHFL=1) and
# without computation reuse, bench_cgstitch; then the GPU unit tests (the
# stitching ones again with warp shuffles) and the shared conformance
# suite under -gpu (codegen off as tests/dml/configs/gpu.xml, and codegen
# on) side by side on cores 0-9, braid's DML suite under gpu.xml beside
# them on cores 10-15 (each run at most TLIM s, default 400). Needs `make
# all build/bench/clprobe build/bench/clrows build/bench/bench_stitch
# build/bench/bench_cgstitch` and, for the conformance suite,
# ../shared/conformance (or CONF); on a machine without braid's build,
# the pack of bench/gpu_pack.sh, unpacked in the checkout, provides all
# of it. Logs go to LOGDIR (default /tmp/braid-gpu-check); the last lines
# printed are the summary.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
R=$PWD L=${1:-/tmp/braid-gpu-check} S=${1:-/tmp/braid-gpu-check}/summary.txt
mkdir -p "$L"; : > "$S"
export OMP_NUM_THREADS=2 GOMP_SPINCOUNT=20000
say() { echo "$*" >> "$S"; }
# a machine set up by bench/gpu_pack.sh's pack: its libraries (the
# compiler runtime only where the machine lacks it), NVIDIA's OpenCL
# driver registered with the ICD loader, the tests' compiled-in source
# folder and the conformance suite
if [ -d .dev/lib ]; then
  export LD_LIBRARY_PATH=$R/.dev/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  for f in .dev/libfb/*; do
    ldconfig -p | grep -q "$(basename "$f") " || { export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$R/.dev/libfb; break; }
  done
  if ! ls /etc/OpenCL/vendors/*.icd > /dev/null 2>&1; then
    nv=$( (ldconfig -p | awk '/libnvidia-opencl.so.1 /{print $NF; exit}'; find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libnvidia-opencl.so.1' 2>/dev/null) | head -1)
    [ -n "$nv" ] && mkdir -p /etc/OpenCL/vendors && echo "$nv" > /etc/OpenCL/vendors/nvidia.icd
  fi
  src=$(strings build/tests/test_gpugen | grep -m1 -o '^/[^ ]*/scripts/builtin$' | sed 's|/scripts/builtin$||')
  [ -n "$src" ] && [ ! -e "$src" ] && mkdir -p "$(dirname "$src")" && ln -s "$R" "$src"
  say "pack: LD_LIBRARY_PATH=$LD_LIBRARY_PATH; vendors: $(cat /etc/OpenCL/vendors/*.icd 2>/dev/null | tr '\n' ' '); source folder $src"
fi
CONF=${CONF:-$R/../shared/conformance}
[ -d "$CONF" ] || CONF=$R/.dev/conformance
timeout 60 build/bench/clprobe > "$L/probe.txt" 2>&1; say "clprobe rc=$?"
grep -v extensions "$L/probe.txt" >> "$S"
s=$(date +%s); timeout -k 5 60 build/bench/clrows > "$L/clrows.txt" 2>&1
say "clrows rc=$? $(( $(date +%s) - s )) s"; cat "$L/clrows.txt" >> "$S"
if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  s=$(date +%s); timeout -k 5 180 python3 bench/torch_stitch.py > "$L/torch_stitch.txt" 2>&1
  say "torch_stitch rc=$? $(( $(date +%s) - s )) s"; cat "$L/torch_stitch.txt" >> "$S"
fi
for b in bench_stitch bench_cgstitch; do
  s=$(date +%s); timeout -k 5 60 build/bench/$b > "$L/$b.txt" 2>&1
  say "$b rc=$? $(( $(date +%s) - s )) s"; cat "$L/$b.txt" >> "$S"
done
# the stitched kernels with warp shuffles (off by default until timed
# here) and without computation reuse
for v in BRAID_GPU_SHFL=1 BRAID_STITCH_REUSE=0; do
  s=$(date +%s); env $v timeout -k 5 60 build/bench/bench_stitch > "$L/bench_stitch_$v.txt" 2>&1
  say "bench_stitch $v rc=$? $(( $(date +%s) - s )) s"; grep -v "^  " "$L/bench_stitch_$v.txt" >> "$S"
done
run() { n=$1 c=$2; shift 2; s=$(date +%s)
  ( timeout -k 5 "${TLIM:-400}" taskset -c "$c" "$@" > "$L/$n.txt" 2>&1; echo "rc=$? $(( $(date +%s) - s )) s" >> "$L/$n.txt" ) & }
for t in test_gpu test_stitch test_gpustitch test_gpugen test_cgstitch test_shfl; do run $t 0-9 build/tests/$t; done
for t in test_stitch test_gpustitch test_gpugen; do run ${t}_shfl 10-15 env BRAID_GPU_SHFL=1 build/tests/$t; done
BRAID_DML_EXTRA_ARGS="-config $R/tests/dml/configs/gpu.xml" run dml_gpu 10-15 tests/dml/run.sh "$R/build/braid"
conf=$CONF
if [ -x "$conf/run.sh" ]; then
  printf '#!/bin/sh\nexec %s -config %s "$@"\n' "$R/build/braid" "$R/tests/dml/configs/gpu.xml" > "$L/braid-gpu"
  printf '<root><sysds.gpu>force</sysds.gpu></root>\n' > "$L/gpucg.xml"
  printf '#!/bin/sh\nexec %s -config %s "$@"\n' "$R/build/braid" "$L/gpucg.xml" > "$L/braid-gpucg"
  chmod +x "$L"/braid-gpu*
  run conf_gpu 0-9 sh -c "cd '$conf' && ./run.sh '$L/braid-gpu'"
  run conf_gpucg 0-9 sh -c "cd '$conf' && ./run.sh '$L/braid-gpucg'"
fi
wait
for f in "$L"/test_*.txt "$L"/conf_*.txt "$L"/dml_*.txt; do
  say "== $(basename "$f" .txt): $(grep -E 'passed' "$f" | tail -1) $(tail -1 "$f")"
  grep -E 'FAIL' "$f" | head -20 >> "$S"
done
cat "$S"
