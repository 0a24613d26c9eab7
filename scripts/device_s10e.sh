#!/usr/bin/env bash
# The tenth session's last H200 call: regression after the row-strided-view launcher change
# and the batched gather: the GPU tests (matmul, runtime wrappers, jit, run), then the MoE
# layer's correctness cases but the 128-expert one (its top-k build is minutes) with the batched gather.  (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
T0=$SECONDS
timeout 150 python3 -m pytest -q -x -p no:cacheprovider -m "slow or not slow" tests/ops/test_matmul_gpu.py \
  tests/runtime/test_wrappers_on_gpu.py tests/runtime/test_jit.py tests/runtime/test_tensor_map_only_views.py 2>&1 | tail -8 | tee "$OUT/gpu-tests.log"
echo "gpu tests rc=${PIPESTATUS[0]} ($((SECONDS - T0)) s)"
timeout 190 python3 scripts/device_moe_gather.py --shapes mixtral-4096 --out "$OUT/moe-correct.json" \
  --correct tails,one-token,empty-expert,all-to-one,finegrained-tails,decode-16,mixtral-tail 2>&1 | tail -12 | tee "$OUT/moe-correct.log"
echo "moe correct rc=${PIPESTATUS[0]} ($((SECONDS - T0)) s)"
