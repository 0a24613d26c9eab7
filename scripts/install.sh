#!/usr/bin/env bash
# Install Argus into the current Python (3.10+ with pip), editable, with the extras the
# demo and the tests need. On a machine with an NVIDIA driver the `gpu` extra comes too.
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

extras="dev,draw"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    extras="$extras,gpu"
fi

"$PYTHON" -m pip install --disable-pip-version-check -q -e ".[$extras]"
"$PYTHON" -m pip install --disable-pip-version-check -q --no-deps "nvidia-cutlass==4.2.0.0"
