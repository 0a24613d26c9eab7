#!/usr/bin/env bash
# The twelfth session's fourth H200 call: the GEMM's ~5% drop on its eight shapes after the
# producer-wait change, A/B in one run: each producer form of argus/kernels/gemm.py in turn
# (scripts/ab/: allwait = every producer thread waits (before), electwait = the wait inside the
# elect_one of each k-step (now), electloop = the whole producer loop inside one elect_one),
# three shapes x the nk layout, cuBLAS timed in the same run; electwait again at the end (noise).
#   bash scripts/device_s12d.sh   (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
cp argus/kernels/gemm.py /tmp/gemm-orig.py
for v in electwait allwait electloop electwait; do
  cp "scripts/ab/gemm_$v.py" argus/kernels/gemm.py
  echo "== $v"
  timeout 75 python3 -m argus.cli.main bench gemm --timing --dtypes bf16 --layouts nk \
    --shapes 4096x4096x4096,8192x8192x8192,128x4096x4096 2>&1 | grep -E "^timing|geomean" | tee -a "$OUT/ab.log"
done
cp /tmp/gemm-orig.py argus/kernels/gemm.py
