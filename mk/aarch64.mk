# SPDX-License-Identifier: Apache-2.0
# mk/aarch64.mk -- the aarch64 Linux build (a cross compiler) and its tests under qemu-user
# (docs/platforms.md). Included by the Makefile.
#
#   make aarch64        build/aarch64-linux-gnu/: libcudaload.so (the same fatbin embedded as the
#                       native build), cudaload-probe, the fake libcuda.so.1 and tests/test_aarch64,
#                       by make CROSS=aarch64-linux-gnu-
#   make check-aarch64  tests/aarch64/run.sh: the loader tests under qemu-aarch64-static against
#                       NVIDIA's real aarch64 wheels (nvidia-cuda-runtime 13.x and -cu12), and the
#                       probe's JSON
#
# Tools: aarch64-linux-gnu-gcc with its libc (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross),
# qemu-aarch64-static (qemu-user-static), python3 and pip for the wheels (cached in ARM_WHEELS).

ARM_CROSS   ?= aarch64-linux-gnu-
ARM_B       := build/$(patsubst %-,%,$(ARM_CROSS))
ARM_SYSROOT ?= /usr/$(patsubst %-,%,$(ARM_CROSS))
QEMU_ARM    ?= $(firstword $(shell command -v qemu-aarch64-static qemu-aarch64 2>/dev/null))

ARM_CC      := $(shell command -v $(ARM_CROSS)gcc 2>/dev/null)

.PHONY: aarch64 check-aarch64
aarch64:
	@test -n "$(ARM_CC)" || { echo "error: $(ARM_CROSS)gcc not found (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"; exit 1; }
	$(MAKE) CROSS=$(ARM_CROSS) $(ARM_B)/libcudaload.so $(ARM_B)/cudaload-probe $(ARM_B)/fake/libcuda.so.1 \
	  $(ARM_B)/tests/test_aarch64

# Without the cross compiler nothing is built and run.sh says SKIP (exit 0), or fails under CI=true.
check-aarch64: $(if $(ARM_CC),aarch64)
	QEMU=$(QEMU_ARM) SYSROOT=$(ARM_SYSROOT) AB=$(abspath $(ARM_B)) CUDA_HOME=$(CUDA_HOME) \
	  ARM_FATBIN=$(if $(NVCC),$(abspath $(FATBIN))) tests/summary.sh run aarch64 tests/aarch64/run.sh

# the test program, built by the CROSS make above (B is then the aarch64 build dir)
$(B)/tests/test_aarch64: tests/aarch64/test_aarch64.c tests/emu_runner.h $(B)/libcudaload.so include/cudaload.h | $(B)/tests
	$(CC) -std=c11 $(WARN) -O1 -g -Iinclude -Itests -isystem $(CUDA_INC) -o $@ $< -L$(B) -lcudaload -ldl
