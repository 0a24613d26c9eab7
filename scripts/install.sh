#!/usr/bin/env bash
# Install Argus into the current Python (3.10+ with pip), editable, with the extras the
# demo and the tests need (dev, draw, ray). On a machine with an NVIDIA driver the `gpu` extra comes too.
# nvidia-cutlass (pycute, a test oracle only) goes in with --no-deps: its own
# dependencies are heavy and the tests need none of them.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python}"
"$PYTHON" - <<'PY'
import sys
if sys.version_info < (3, 10):
    sys.exit(f"Argus needs Python 3.10 or newer; this is {sys.version.split()[0]}")
PY

pip_install() { "$PYTHON" -m pip install --disable-pip-version-check -q "$@"; }

extras="dev,draw,ray"      # ray: the parallel-evaluation backend's test (tests/agent/test_ray_backend.py)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    extras="$extras,gpu"      # torch with CUDA, cuda-python
elif ! "$PYTHON" -c "import torch" >/dev/null 2>&1; then
    # No GPU and no torch: take the CPU build where one is at hand (torch 2.13.0 here),
    # rather than letting the dev extra's range pull a CUDA build of several GB.
    pip_install "torch==2.13.0" || pip_install torch
fi

pip_install -e ".[$extras]"
pip_install --no-deps "nvidia-cutlass==4.2.0.0"
