#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/deps.sh -- make sure what the CPU tests need is installed (run by `make check`).
# Needs: cmocka (Debian's libcmocka-dev), pkg-config and binutils (the install test), and a python3 that can make venvs (the fixtures
# install real nvidia wheels from PyPI into venvs), valgrind (make check-valgrind), libabigail's
# abidw and abidiff (abigail-tools: make check-abi). The
# sanitizer builds use gcc's own runtimes (libasan, libubsan, libtsan: gcc's dependencies).
# Installs what is missing when run as root on Debian/Ubuntu; otherwise says what to install.
#
# tests/deps.sh fuzz -- what `make fuzz` needs instead: clang with its libFuzzer and sanitizer
# runtimes (Debian: clang and libclang-rt-<major>-dev, which clang only recommends).
set -euo pipefail
python=${PYTHON:-python3}
need=()
if [ "${1:-}" = fuzz ]; then
    cc=${CLANG:-clang}
    probe=$(mktemp -d)
    trap 'rm -rf "$probe"' EXIT
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n); int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' > "$probe/t.c"
    if ! command -v "$cc" >/dev/null; then
        need+=(clang)
    fi
    if ! "$cc" -fsanitize=fuzzer,address,undefined -o "$probe/t" "$probe/t.c" 2>/dev/null; then
        major=$("$cc" -dumpversion 2>/dev/null | cut -d. -f1 || true)
        if [ -z "$major" ] && command -v apt-cache >/dev/null; then
            major=$(apt-cache depends clang 2>/dev/null | sed -n 's/.*Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -1)
        fi
        need+=("libclang-rt-${major:-14}-dev")
    fi
else
    [ -f /usr/include/cmocka.h ] || need+=(libcmocka-dev)
    command -v pkg-config >/dev/null || need+=(pkg-config)
    command -v readelf >/dev/null || need+=(binutils)
    "$python" -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
    command -v valgrind >/dev/null || need+=(valgrind)
    command -v abidiff >/dev/null && command -v abidw >/dev/null || need+=(abigail-tools)
fi
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "tests/deps.sh: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
    echo "tests/deps.sh: missing ${need[*]}: install them (e.g. sudo apt-get install ${need[*]})" >&2
    exit 1
fi
