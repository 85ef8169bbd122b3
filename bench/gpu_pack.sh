#!/bin/bash
# bench/gpu_pack.sh: packs what bench/gpu_check.sh runs into .dev/pack.tar.xz
# for a GPU machine that has no braid build and none of its Debian
# libraries (the device machine: an NVIDIA driver, gcc for codegen's CPU
# operators, python3): the stripped binaries under build/, every shared
# library they load but glibc's (.dev/lib; the compiler runtime apart in
# .dev/libfb, for a machine that lacks it) and the shared conformance
# suite (.dev/conformance). Needs `make all build/bench/clprobe
# build/bench/clrows build/bench/bench_stitch build/bench/bench_cgstitch`.
# On the machine, from the repository root:
#   tar xJf .dev/pack.tar.xz && bash bench/gpu_check.sh LOGDIR
# (gpu_check.sh sets the library path and the OpenCL vendor file.)
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bins="build/braid build/tests/test_gpu build/tests/test_stitch build/tests/test_gpustitch build/tests/test_gpugen build/tests/test_shfl
      build/tests/test_cgstitch build/bench/clprobe build/bench/clrows build/bench/bench_stitch build/bench/bench_cgstitch"
S=.dev/stage
rm -rf .dev && mkdir -p $S/.dev/lib $S/.dev/libfb
for b in $bins; do mkdir -p "$S/$(dirname "$b")" && strip -o "$S/$b" "$b"; done
ldd $bins | awk '/=> \//{print $3}' | sort -u | while read -r f; do
  case "$(basename "$f")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) ;;
    libstdc++.so*|libgcc_s.so*|libgomp.so*) cp -L "$f" $S/.dev/libfb/ ;;
    *) cp -L "$f" $S/.dev/lib/ ;;
  esac
done
cp -r ../shared/conformance $S/.dev/conformance
tar -C $S -cJf .dev/pack.tar.xz .
rm -rf $S
ls -l .dev/pack.tar.xz
