# braid build. `make` builds build/braid; `make test` builds and runs every
# test; `make san` runs the tests under ASan+UBSan; `make bench-kernels`
# runs the kernel benchmark. Dependencies are installed by tools/deps.sh.
#
# ISA: everything is portable C11 for the target's baseline (x86-64:
# SSE2; aarch64: armv8-a) plus CFLAGS_ISA, so one binary runs on any CPU
# of the target. Only the leaf kernel files (kernels/*_leaf.c: loops, no
# threads or allocation) are compiled once more per SIMD level of x86-64
# (avx2 = x86-64-v3, avx512 = x86-64-v4), each copy defining its own table
# of functions; kernels/isa.c picks the tables by cpuid at run time
# (BRAID_ISA=generic|avx2|avx512 caps the choice). Examples:
#   make BUILD=build-v2 CFLAGS_ISA=-march=x86-64-v2 test   # x86-64-v2 and up
#   make CFLAGS_ISA=-march=native                          # this CPU only
# Generated operators are compiled at run time with -march=native
# (codegen/jit.c): they run where they are compiled. The benchmarks
# (bench/) are built with -march=native too: their reference loops
# measure this machine.

CC      ?= gcc
BUILD   ?= build
ifeq ($(SAN),1)
BUILD   := build-san
endif
MODS    := base matrix kernels io dist gpu lang hops rewrite codegen runtime builtins plan api
SRC     := $(foreach m,$(MODS),$(wildcard $(m)/*.c))
OBJ     := $(SRC:%.c=$(BUILD)/obj/%.o)
TESTSRC := $(wildcard tests/test_*.c)
TESTS   := $(TESTSRC:tests/%.c=$(BUILD)/tests/%)
OPT     ?= -O2
CFLAGS_ISA ?=
# Debian multiarch triplet of the target (x86_64-linux-gnu, aarch64-linux-gnu)
TRIPLET := $(shell $(CC) -print-multiarch 2>/dev/null)
ifeq ($(TRIPLET),)
TRIPLET := $(shell $(CC) -dumpmachine)
endif
LEAVES  := $(wildcard kernels/*_leaf.c)
ifneq ($(filter x86_64-%,$(TRIPLET)),)
LEAF_ISAS := avx2 avx512
endif
OBJ     += $(foreach i,$(LEAF_ISAS),$(LEAVES:%.c=$(BUILD)/obj/%.$(i).o))
# the leaves' loops vectorize sqrt (vsqrtpd: the same correctly rounded
# bits) only when a negative argument need not set errno, and floor
# (round()'s) only when FP exceptions need not be kept exact; nothing in
# braid reads errno after a math function or tests FP exception flags
# (the generated kernels are compiled without errno too, codegen/jit.c)
LEAF_FLAGS := -fno-math-errno -fno-trapping-math
$(LEAVES:%.c=$(BUILD)/obj/%.o): CFLAGS += $(LEAF_FLAGS)
CFLAGS  += -std=c11 -D_GNU_SOURCE -g $(OPT) $(CFLAGS_ISA) -fopenmp -fPIC -fno-semantic-interposition \
           -Wall -Wextra -Werror -Wno-unused-parameter -I. -MMD -MP \
           -DBRAID_SOURCE_DIR=\"$(CURDIR)\"
# OpenBLAS: Debian's pthread build, linked by path (with DT_RPATH, so the
# BLAS/LAPACK that liblapacke loads resolve to the same library) whatever
# the system's alternatives point to: measured faster than the OpenMP build
# for the small BLAS calls of iterative algorithms.
BLASDIR ?= /usr/lib/$(TRIPLET)/openblas-pthread
LDLIBS  += -L$(BLASDIR) -lopenblas -llapacke -lcjson -lm -ldl -lpthread
LDFLAGS += -fopenmp -Wl,--disable-new-dtags -Wl,-rpath,$(BLASDIR)
# OpenMPI (Debian's openmpi-bin/libopenmpi-dev; what mpicc --showme
# prints, written out so that make needs no mpicc before tools/deps.sh
# has run). Linked always; initialized only under mpirun (dist/dist.h).
MPIDIR  ?= /usr/lib/$(TRIPLET)/openmpi
CFLAGS  += -I$(MPIDIR)/include -I$(MPIDIR)/include/openmpi
LDLIBS  += -L$(MPIDIR)/lib -lmpi
LDFLAGS += -Wl,-rpath,$(MPIDIR)/lib
# OpenCL through the ICD loader (ocl-icd) and CLBlast: the GPU backend
# (gpu/, docs/gpu.md); PoCL is the CPU device the tests run on. Both are
# loaded (dlopen) when the backend is first asked for, not linked; the
# OpenCL benchmarks call OpenCL themselves
$(BUILD)/bench/%: LDLIBS += -lOpenCL
# HDF5 files (io/hdf5.c): Debian's serial build of the HDF5 library,
# loaded (dlopen, by the soname read here) when a script first reads or
# writes an HDF5 file: linked, its 35 libraries took ~12 ms of every start
HDF5DIR ?= /usr/lib/$(TRIPLET)/hdf5/serial
HDF5_SONAME := $(shell readelf -d $(HDF5DIR)/libhdf5.so 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
CFLAGS  += -I/usr/include/hdf5/serial
$(BUILD)/obj/io/hdf5.o: CFLAGS += $(if $(HDF5_SONAME),-DBRAID_HDF5_SONAME='"$(HDF5_SONAME)"')
# (test_io writes HDF5 files of other layouts with the library itself)
$(BUILD)/tests/test_io: LDLIBS += -L$(HDF5DIR) -lhdf5
ifeq ($(SAN),1)
CFLAGS  += -DBRAID_VERIFY_FIN -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined,float-cast-overflow
LDFLAGS += -fsanitize=address,undefined,float-cast-overflow
endif


# keep the objects of tests, benchmarks and examples, which make reaches
# through a chain of pattern rules (and make's output ends with the test
# summary); never `.SECONDARY:` without targets: it made every object
# intermediate, so a new source file's missing object was not built into
# libbraid.a (tools/makedeps.py checks)
.SECONDARY: $(TESTSRC:%.c=$(BUILD)/obj/%.o) $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard bench/*.c examples/*.c))

.PHONY: all kernels deps python python-dir sdist-dirs test san bench-stitch bench-kernels bench-python bench-cla bench-compile bench-codegen bench-codegen-cold bench-e2e clean example fuzz fuzz-long

all: $(BUILD)/braid $(if $(filter 1,$(SAN)),,kernels)

# The prebuilt kernel set (tools/kernels.sh, docs/perf.md): the e2e
# algorithms' fused operators compiled at build time, loaded by braid
# when the user's cache lacks them (cold runs compile nothing)
kernels: $(BUILD)/kernels.stamp

$(BUILD)/kernels.stamp: $(BUILD)/braid tools/kernels.sh $(wildcard bench/e2e/*.dml) $(wildcard scripts/builtin/*.dml)
	@tools/kernels.sh $(BUILD)
	@touch $@

deps: $(BUILD)/.deps

$(BUILD)/.deps: tools/deps.sh
	@mkdir -p $(BUILD)
	@./tools/deps.sh
	@touch $@

$(BUILD)/obj/%.o: %.c | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# the SIMD copies of the leaf kernel files (see the ISA note above; their
# -march comes last and wins over one in CFLAGS_ISA)
$(BUILD)/obj/%.avx2.o: %.c | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LEAF_FLAGS) -march=x86-64-v3 -DK_ISA=avx2 -c $< -o $@

$(BUILD)/obj/%.avx512.o: %.c | $(BUILD)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LEAF_FLAGS) -march=x86-64-v4 -DK_ISA=avx512 -c $< -o $@

$(BUILD)/obj/bench/%.o: CFLAGS += -march=native

$(BUILD)/libbraid.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $^

# (--wrap: allocation-failure injection of plain allocations, cli/main.c)
$(BUILD)/braid: $(BUILD)/obj/cli/main.o $(BUILD)/libbraid.a
	$(CC) $(LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(BUILD)/libbraid.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test: $(BUILD)/braid $(TESTS) $(BUILD)/examples/embed $(BUILD)/tests/test_python $(BUILD)/tests/test_python_lazy \
      $(BUILD)/tests/test_python_install
	@./tests/run_all.sh $(BUILD)

# The Python package braid (python/, docs/python.md): the extension
# _braid is C against Debian's python3-dev, for Debian's /usr/bin/python3
# (PATH may put another python3 first), linked with the -fPIC libbraid.a.
# Use it with PYTHONPATH=$(BUILD)/python.
PY      ?= /usr/bin/python3
PYDIR   := $(BUILD)/python/braid
PYSRC   := $(wildcard python/braid/*.py)
python: $(PYDIR)/_braid.so $(PYSRC:python/braid/%=$(PYDIR)/%)

$(BUILD)/obj/python/_braid.o: CFLAGS += $(shell $(PY)-config --includes)

$(PYDIR)/_braid.so: $(BUILD)/obj/python/_braid.o $(BUILD)/libbraid.a
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS) $(shell $(PY)-config --ldflags)

$(PYDIR)/%.py: python/braid/%.py
	@mkdir -p $(dir $@)
	cp $< $@

# the folder `make python` builds the package in (setup.py, which pip
# runs, asks for it and copies the extension from there)
python-dir:
	@echo $(CURDIR)/$(PYDIR)

# what setup.py's sdist packs besides the Makefile: all that `make
# python` compiles or installs (folders whole)
sdist-dirs:
	@echo $(MODS) include python scripts/builtin tools/deps.sh

# the Python tests as one test program of run_all.sh each, run by pytest
# where it is installed (tests/python/conftest.py; else the file's own
# main, the same tests and checks), with synchronous
# codegen as the DML tests (asynchronous compilation lets two seeded runs
# of one algorithm run different plans, equal only to the last bits, and
# an iteration count compared across runs may move); under the
# sanitizers the interpreter (not built with them) preloads their run-time
# libraries, and leak checking is off (CPython keeps memory to its exit)
ifeq ($(SAN),1)
PYENV   := LD_PRELOAD="$(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)" \
           ASAN_OPTIONS=detect_leaks=0
endif
$(BUILD)/tests/test_python: tests/python/test_braid.py
$(BUILD)/tests/test_python_lazy: tests/python/test_lazy.py
$(BUILD)/tests/test_python_install: tests/python/test_install.py
$(BUILD)/tests/test_python $(BUILD)/tests/test_python_lazy $(BUILD)/tests/test_python_install: python
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexport %s BRAID_CODEGEN_ASYNC=0 BRAID_MAKE_ARGS="BUILD=$(BUILD) SAN=$(SAN)" PYTHONPATH="%s"\n%s\n' \
	    '$(PYENV)' "$(CURDIR)/$(BUILD)/python" \
	    'if $(PY) -c "import pytest" 2>/dev/null; then exec $(PY) -m pytest -q -p no:cacheprovider "$(CURDIR)/$(filter %.py,$^)" "$$@"; fi; exec $(PY) "$(CURDIR)/$(filter %.py,$^)" "$$@"' > $@
	chmod +x $@

san:
	$(MAKE) SAN=1 test

# The example of README: train L2SVM on generated data.
example: $(BUILD)/braid
	$(BUILD)/braid -f examples/l2svm_demo.dml -stats 5

# make fuzz: the DML parser and every reader briefly (CI: 60 s in all);
# make fuzz-long: FUZZ_LONG_SECONDS in all (default an hour)
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 3600
fuzz: $(BUILD)/.deps
	@BRAID_EXTRA_PKGS="clang libclang-rt-14-dev" ./tools/deps.sh
	./fuzz/run.sh $(FUZZ_SECONDS)

fuzz-long: $(BUILD)/.deps
	@BRAID_EXTRA_PKGS="clang libclang-rt-14-dev" ./tools/deps.sh
	./fuzz/run.sh $(FUZZ_LONG_SECONDS)

bench-codegen: $(BUILD)/bench/bench_codegen
	GOMP_SPINCOUNT=20000 $(BUILD)/bench/bench_codegen

bench-python: python
	PYTHONPATH=$(BUILD)/python $(PY) bench/bench_python.py

bench-e2e: $(BUILD)/braid kernels
	bench/e2e.sh

bench-codegen-cold: $(BUILD)/braid
	bench/bench_codegen_cold.sh $(BUILD)/braid 3

bench-compile: $(BUILD)/bench/bench_compile
	$(BUILD)/bench/bench_compile scripts/builtin

bench-cla: $(BUILD)/bench/bench_cla
	$(BUILD)/bench/bench_cla

# stitched kernels against XLA-style and per-operator GPU plans (docs/gpu.md)
bench-stitch: $(BUILD)/bench/bench_stitch
	$(BUILD)/bench/bench_stitch

bench-kernels: $(BUILD)/bench/bench_kernels
	OMP_NUM_THREADS=2 $(BUILD)/bench/bench_kernels

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/libbraid.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/examples/%: $(BUILD)/obj/examples/%.o $(BUILD)/libbraid.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

clean:
	rm -rf build build-san $(BUILD)

# every object's dependencies, the library's and the tests' and those of
# the objects outside them (cli/main.o, bench/, examples/, python/, fuzz/):
# a bench object left out once kept an old layout of Rt after a header
# grew it, and its run overwrote its caller's stack (tools/makedeps.sh)
-include $(sort $(OBJ:.o=.d) $(TESTS:$(BUILD)/tests/%=$(BUILD)/obj/tests/%.d) \
                $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null))
