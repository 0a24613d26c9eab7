#!/usr/bin/env bash
# Every test, the slow ones too (CUDA builds of large kernels, whole variant sweeps): what
# CI's default run (`python -m pytest`, slow tests left out) samples.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python}" -m pytest -m "slow or not slow" "$@"
