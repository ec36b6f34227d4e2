#!/usr/bin/env bash
# tests/deps.sh -- make sure what the CPU tests need is installed (run by `make check`).
# Needs: cmocka (Debian's libcmocka-dev), pkg-config and binutils (the install test), and a python3 that can make venvs (the fixtures
# install real nvidia wheels from PyPI into venvs). Installs what is missing when run as
# root on Debian/Ubuntu; otherwise says what to install.
set -euo pipefail
python=${PYTHON:-python3}
need=()
[ -f /usr/include/cmocka.h ] || need+=(libcmocka-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v readelf >/dev/null || need+=(binutils)
"$python" -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
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
