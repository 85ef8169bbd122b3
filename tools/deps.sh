#!/bin/sh
# deps.sh: install the Debian packages braid builds against, if missing.
# Called by make before the first build; safe to run again. libc6-dev (the
# C library's headers: stdio.h, malloc.h, ...) is only a recommendation of
# gcc, so a gcc installed with --no-install-recommends lacks it; gcc's own
# headers (omp.h, immintrin.h) come with gcc (libgcc-12-dev). python3-dev
# builds the Python package (python/); NumPy, SciPy, pandas and
# scikit-learn are what its tests (tests/python, a pytest suite) check it against. OpenCL
# (the ICD loader and headers), CLBlast and PoCL (a CPU OpenCL device)
# build and test the GPU backend. libhdf5-dev reads and writes HDF5 files
# (io/hdf5.c).
set -e
PKGS="gcc make libc6-dev libopenblas-pthread-dev liblapacke-dev libcjson-dev python3\
      python3-dev python3-numpy python3-scipy openmpi-bin libopenmpi-dev\
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev libhdf5-dev"
# what only the Python tests compare with, and what pip install . (the
# package's pyproject.toml: Debian's setuptools and wheel, into a virtual
# environment; tests/python/test_install.py) uses: without their
# recommended packages (pandas alone would pull in some 60: matplotlib, ...)
TESTPKGS="python3-pandas python3-sklearn python3-pip python3-setuptools python3-wheel python3-venv python3-pytest"
[ -n "$BRAID_EXTRA_PKGS" ] && PKGS="$PKGS $BRAID_EXTRA_PKGS"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
missing_test=""
for p in $TESTPKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing_test="$missing_test $p"
done
[ -z "$missing$missing_test" ] && exit 0
echo "deps: installing$missing$missing_test"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
if [ -n "$missing" ]; then $SUDO apt-get install -y -qq $missing; fi
if [ -n "$missing_test" ]; then $SUDO apt-get install -y -qq --no-install-recommends $missing_test; fi
