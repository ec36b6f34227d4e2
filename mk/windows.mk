# SPDX-License-Identifier: Apache-2.0
# mk/windows.mk -- the Windows build (mingw-w64) and its tests under wine (docs/platforms.md).
# Included by the Makefile.
#
#   make windows        build/win/: libcudaload.a, cudaload-probe.exe, the test program and the
#                       fake nvcuda.dll (tests/fake/fake_cuda.c), all for x86_64 Windows
#   make check-windows  tests/windows/run.sh: the loader tests under wine against the real
#                       win_amd64 nvidia-cuda-runtime wheels (13.x and -cu12), and the probe's JSON
#
# Tools: x86_64-w64-mingw32-gcc (posix threads flavour: winpthreads), wine (wine64), python3 and
# pip for the wheels (cached in WIN_WHEELS, default build/win/wheels). Everything is linked -static: no mingw DLL to ship.

MINGW_CC    ?= $(firstword $(shell command -v x86_64-w64-mingw32-gcc-posix x86_64-w64-mingw32-gcc 2>/dev/null))
WINE        ?= $(firstword $(shell command -v wine64 wine 2>/dev/null) $(wildcard /usr/lib/wine/wine64))
WB          := $(B)/win
# -Wno-format: mingw's printf checks follow msvcrt's formats (no %zu); the format checks run in
# the Linux build. __USE_MINGW_ANSI_STDIO: the C99 printf, so %zu and %lld print right.
WIN_CFLAGS  := -std=c11 $(WARN) -Wno-format -O2 -g -D__USE_MINGW_ANSI_STDIO=1 \
               -Iinclude -Ilibcudaload -isystem $(CUDA_INC)
WIN_LIB_SRC := $(filter-out libcudaload/platform_posix.c,$(LIB_SRC)) libcudaload/platform_windows.c
WIN_LIB_OBJ := $(WIN_LIB_SRC:libcudaload/%.c=$(WB)/obj/%.o)
# The bundled kernels: the Linux build's fatbin ($(FATBIN), same device code), embedded by
# fatbin_windows.S; without nvcc the build has none, as on Linux (KERNEL_DEF: -DCL_NO_KERNELS).
ifneq ($(NVCC),)
WIN_LIB_OBJ += $(WB)/obj/fatbin_windows.o
endif
WIN_PROBE_SRC := tools/cudaload-probe.c $(filter-out tools/probe_platform_posix.c,$(wildcard tools/probe_*.c))
WIN_BINS    := $(WB)/libcudaload.a $(WB)/cudaload-probe.exe $(WB)/tests/test_windows.exe $(WB)/tests/nvcuda.dll \
               $(WB)/tests/deps/cudart64_12.dll

.PHONY: windows check-windows windows-tools
windows-tools:
	@test -n "$(MINGW_CC)" || { echo "error: x86_64-w64-mingw32-gcc not found (apt-get install mingw-w64)"; exit 1; }

windows: windows-tools $(WIN_BINS)

$(WB)/obj $(WB)/tests:
	mkdir -p $@

$(WB)/obj/%.o: libcudaload/%.c $(HEADERS) libcudaload/platform.h mk/windows.mk | $(WB)/obj
	$(MINGW_CC) $(WIN_CFLAGS) -c -o $@ $<

$(WB)/obj/kernels_device.o $(WB)/obj/kernels_image.o: $(WB)/obj/%.o: libcudaload/%.c $(HEADERS) $(if $(NVCC),$(B)/kernels/kernels_build.h) mk/windows.mk | $(WB)/obj
	$(MINGW_CC) $(WIN_CFLAGS) $(KERNEL_DEF) -c -o $@ $<

$(WB)/obj/fatbin_windows.o: libcudaload/fatbin_windows.S $(FATBIN) | $(WB)/obj
	$(MINGW_CC) -c -DCL_FATBIN_PATH='"$(abspath $(FATBIN))"' -o $@ $<

$(WB)/libcudaload.a: $(WIN_LIB_OBJ)
	rm -f $@
	x86_64-w64-mingw32-ar rcs $@ $(WIN_LIB_OBJ)

$(WB)/cudaload-probe.exe: $(WIN_PROBE_SRC) $(wildcard tools/*.h) $(WB)/libcudaload.a | $(WB)
	$(MINGW_CC) $(WIN_CFLAGS) -Itools -static -o $@ $(WIN_PROBE_SRC) $(WB)/libcudaload.a -lm

$(WB)/tests/test_windows.exe: tests/windows/test_windows.c tests/emu_runner.h $(WB)/libcudaload.a | $(WB)/tests
	$(MINGW_CC) $(WIN_CFLAGS) -Itests -static -o $@ $< $(WB)/libcudaload.a

# the fake driver, as the application directory's nvcuda.dll of the test program
$(WB)/tests/nvcuda.dll: tests/fake/fake_cuda.c | $(WB)/tests
	$(MINGW_CC) -std=c11 -Wall -Wextra -Werror -Wno-format -O2 -shared -static -isystem $(CUDA_INC) -o $@ $<

# Without mingw-w64 nothing is built and run.sh says SKIP (exit 0), or fails under CI=true.
check-windows: $(if $(MINGW_CC),windows)
	WINE=$(or $(WINE),wine64) WB=$(abspath $(WB)) WIN_FATBIN=$(if $(NVCC),$(abspath $(FATBIN))) tests/summary.sh run windows tests/windows/run.sh

# dependencies from the DLL's own directory: a cudart64_12.dll importing cl_sibling.dll
$(WB)/tests/deps/cl_sibling.dll: tests/windows/fake_sibling.c
	mkdir -p $(@D)
	$(MINGW_CC) -O2 -shared -static -o $@ $< -Wl,--out-implib,$(WB)/tests/deps/libcl_sibling.a

$(WB)/tests/deps/cudart64_12.dll: tests/windows/fake_dep_cudart.c $(WB)/tests/deps/cl_sibling.dll
	$(MINGW_CC) -O2 -shared -static -o $@ $< -L$(WB)/tests/deps -lcl_sibling
