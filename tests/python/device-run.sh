#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/python/device-run.sh LOGDIR -- the python-shim GPU tests on the GPU machine, offline.
#
# Builds and installs the cudaload package from python-shim/ with the interpreter that has
# torch and cupy (PYTHON, default /opt/torch/.venv/bin/python, else python3) into a --target
# dir under the build dir (its environment is left untouched; no network: no build
# isolation, no dependencies), then runs `python -m pytest tests/python -k gpu` (-k "$PYTEST_K"
# when set: a subset) with that dir on PYTHONPATH, and `python -m cudaload` (text and --json).
# Logs go to LOGDIR:
#   install.txt, pytest-gpu.txt, probe.txt, probe.json, env.txt
# Exit: pytest's status (the install's when it failed).
set -uo pipefail
log=${1:?usage: tests/python/device-run.sh LOGDIR}
mkdir -p "$log" && log=$(cd "$log" && pwd)
cd "$(dirname "$0")/../.." || exit 2
py=${PYTHON:-}
if [ -z "$py" ]; then
    if [ -x /opt/torch/.venv/bin/python ]; then py=/opt/torch/.venv/bin/python; else py=python3; fi
fi
b=${CUDALOAD_TEST_BUILD:-$PWD/build/device-py}
target=$b/python/device-target
{
    echo "python: $py ($("$py" -c 'import sys; print(sys.version.split()[0])'))"
    "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1
    "$py" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1
    "$py" -c 'import pytest, numpy; print("pytest", pytest.__version__, "numpy", numpy.__version__)' 2>&1 | tail -1
    nvidia-smi -L 2>&1
    command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>&1
} > "$log/env.txt"
cat "$log/env.txt"

rm -rf "$target"
start=$SECONDS
if ! CUDALOAD_BUILD_BASE=$b/python/setuptools "$py" -m pip install --no-build-isolation --no-deps --no-index \
        --disable-pip-version-check --target "$target" ./python-shim > "$log/install.txt" 2>&1; then
    echo "device-run: installing python-shim failed (log: $log/install.txt)"; tail -30 "$log/install.txt"; exit 1
fi
echo "device-run: python-shim built and installed into $target in $((SECONDS - start)) s"

# no network here: the example extension builds without isolation, with the cudaload just
# installed (on PYTHONPATH) and this interpreter's setuptools
export PYTHONPATH=$target${PYTHONPATH:+:$PYTHONPATH} CUDALOAD_TEST_BUILD=$b CUDALOAD_TEST_NO_BUILD_ISOLATION=1
"$py" -m cudaload > "$log/probe.txt" 2>&1; echo "python -m cudaload: exit $?" | tee -a "$log/probe.txt"
"$py" -m cudaload --json --no-selftest > "$log/probe.json" 2>&1
"$py" -m pytest tests/python -k "${PYTEST_K:-gpu}" -v -rs -p no:cacheprovider 2>&1 | tee "$log/pytest-gpu.txt"
rc=${PIPESTATUS[0]}
echo "device-run: pytest exit $rc; logs in $log"
exit "$rc"
