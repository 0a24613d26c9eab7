#!/usr/bin/env bash
# H200 call for issue 18 items 1 and 3: the configuration model's sweep (training seeds) and
# the host-overhead profile. Run through the device tool with carry [".whl"]; logs in $OUT.
#   bash scripts/device_gemm_call.sh [sweep|host|op|final|bench SEED|all]   (final = host + op)
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
PHASE="${1:-all}"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
case "$PHASE" in
  host|all|final) timeout 120 python3 scripts/device_host_overhead.py "$OUT/host-overhead.json" 2>&1 | tee "$OUT/host-overhead.log" ;;&
  op|final) timeout "${OP_S:-420}" python3 benchmarks/gemm_op.py --random "${COUNT:-40}" --seed "${SEED:-7}" --bench \
      --budget-s "${BUDGET_S:-360}" --out "$OUT/gemm-op-seed${SEED:-7}.json" 2>&1 | tee "$OUT/gemm-op.log" | tail -40 ;;&
  sweep|all) timeout "${SWEEP_S:-420}" python3 scripts/device_gemm_sweep.py --seeds "${SEEDS:-11,12}" \
      --count "${COUNT:-30}" --budget-s "${BUDGET_S:-330}" --out "$OUT/gemm-sweep.json" ;;&
  gputest|all) timeout 300 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_matmul_gpu.py tests/runtime 2>&1 | tail -15 ;;&
  bench) timeout 500 python3 -m argus.cli.main bench gemm --timing --dtypes bf16 --random "${COUNT:-40}" --seed "${2:-7}" ;;
esac
echo "rc=$?"
