#!/usr/bin/env bash
# H200 call (issue 20): the kernel tasks' GPU evaluator on three start kernels (copy, the
# GEMM example, flash attention), scripts/device_kernel_task_gpu.py. ~3 minutes (three
# builds, ncu runs). Run from the repo root through the device tool with carry [".whl"]
# (the z3 wheel, docs/perf-log.md). Outputs in $OUT: kernel-task-gpu.log, kernel-task-gpu-*.json.
set -uo pipefail
source scripts/device_env.sh      # OUT, the z3 wheel, PYTHONPATH, the kernel cache
LOG="$OUT/kernel-task-gpu.log" TAIL=80
run 400 python3 scripts/device_kernel_task_gpu.py --out "$OUT"
