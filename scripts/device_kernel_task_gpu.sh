#!/usr/bin/env bash
# H200 call (issue 20): the kernel tasks' GPU evaluator on three start kernels (copy, the
# GEMM example, flash attention), scripts/device_kernel_task_gpu.py. ~3 minutes (three
# builds, ncu runs). Run from the repo root through the device tool with carry [".whl"]
# (the z3 wheel, docs/perf-log.md). Outputs in $OUT: kernel-task-gpu.log, kernel-task-gpu-*.json.
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR="${ARGUS_CACHE_DIR:-/tmp/argus-cache}"
timeout 400 python3 scripts/device_kernel_task_gpu.py --out "$OUT" 2>&1 | tee "$OUT/kernel-task-gpu.log" | tail -80
