#!/usr/bin/env bash
# The device measurements still waiting (docs/perf-log.md, twenty-first and twenty-second
# sessions), in the order they decide things, under one wall-clock budget: each step gets
# its own bound or what is left of BUDGET (default 540 s), whichever is less, and a step
# that cannot get MIN_STEP seconds (default 60) is skipped and named. One call of the
# device tool then brings back whatever finished, each step's JSON in $OUT as it ends.
#   1. causal launch orders: three causal shapes x default, lpt_on, lpt_g4, lpt_g8
#   2. the four-chain row fold against the linear one (one A B round, four shapes)
#   3. compute-sanitizer memcheck and racecheck on the shipped attention build
#   4. the attention benchmark (issue 16's shapes against cuDNN and flash)
#   5. causal on the persistent grid (walked ring positions): four causal shapes x
#      default, persist_causal, persist_causal_occ2, persist_causal_wgs3 (each variant's
#      correctness checked on the shape first)
#   6. a seeded random draw of attention shapes (SEED, default 2307; 24 shapes)
#   8. d = 64 (the minimum rows): non-causal 1024 and 4096 x default, persist_wgs3,
#      bn256_s2; causal 2048 x default, persist_causal_wgs3, bn256_causal
#   7. issue 18's GEMM judge: a random draw of 40 shapes (SEED) and the eight benchmark
#      shapes against torch.matmul
#   bash scripts/device_queue.sh [STEPS]        (STEPS: e.g. 1234, the default; 34)
# From the repo root through the device tool with carry [".whl"].
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/queue.log"
BUDGET=${BUDGET:-540}
MIN_STEP=${MIN_STEP:-60}
STEPS=${1:-1234}
case "$STEPS" in *[!12345678]*|"") echo "usage: $0 [STEPS of 12345678]"; exit 2 ;; esac
START=$SECONDS
# bounded SECONDS CMD...: the step under min(SECONDS, what is left), or skipped
bounded() {
  local left=$((BUDGET - (SECONDS - START)))
  local bound=$(( $1 < left ? $1 : left ))
  if [ "$bound" -lt "$MIN_STEP" ]; then
    echo "== skipped (only ${left}s of the budget left): ${*:2}" | tee -a "$LOG"
    return 0
  fi
  run "$bound" "${@:2}"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv 2>&1 | tee -a "$LOG"
CAUSAL=8x16x16x2048x2048x64c,4x16x16x4096x4096x128c,4x32x8x4096x4096x128c
CAUSAL4=$CAUSAL,1x16x16x16384x16384x128c
FOLD=16x16x16x1024x1024x64,8x16x16x2048x2048x64c,4x16x16x4096x4096x128,4x16x16x4096x4096x128c
for ((i = 0; i < ${#STEPS}; i++)); do
  case "${STEPS:$i:1}" in
    1) bounded 300 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-lpt.json" \
         --shapes "$CAUSAL" --variants default,lpt_on,lpt_g4,lpt_g8 ;;
    2) cp argus/codegen/lower/exchange.py /tmp/exchange-current.py
       cp argus/codegen/lower/exchange.py /tmp/exchange-fold4.py
       if python3 scripts/ab/splice.py /tmp/exchange-fold4.py scripts/ab/fold4.py; then
         bounded 150 python3 benchmarks/attention_sweep.py \
           --out "$OUT/attention-sweep-fold-current.json" --shapes "$FOLD" --variants default
         cp /tmp/exchange-fold4.py argus/codegen/lower/exchange.py
         bounded 150 python3 benchmarks/attention_sweep.py \
           --out "$OUT/attention-sweep-fold-fold4.json" --shapes "$FOLD" --variants default
       fi
       cp /tmp/exchange-current.py argus/codegen/lower/exchange.py ;;
    3) for tool in memcheck racecheck; do
         bounded 80 compute-sanitizer --tool "$tool" --report-api-errors no \
           python3 benchmarks/attention_sanitize.py
       done ;;
    4) bounded 150 python3 -m argus.cli.main bench attention --out "$OUT/attention-bench.json" ;;
    5) bounded 330 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-persist-causal.json" \
         --shapes "$CAUSAL4" --variants default,persist_causal,persist_causal_occ2,persist_causal_wgs3 ;;
    6) bounded 240 python3 -m argus.cli.main bench attention --random 24 --seed "${SEED:-2307}" \
         --out "$OUT/attention-random.json" ;;
    8) bounded 120 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-d64.json" \
         --shapes 16x16x16x1024x1024x64,4x16x16x4096x4096x64 --variants default,persist_wgs3,bn256_s2
       bounded 80 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-d64c.json" \
         --shapes 8x16x16x2048x2048x64c --variants default,persist_causal_wgs3,bn256_causal ;;
    7) bounded 200 python3 benchmarks/gemm_op.py --random 40 --seed "${SEED:-2307}" --bench \
         --budget-s 170 --out "$OUT/gemm-op-random.json" ;;
  esac
done
echo "queue done in $((SECONDS - START))s" | tee -a "$LOG"
