#!/usr/bin/env bash
# The eighth session's last H200 call, phases in priority order (the call may be cut at 600 s;
# each phase writes under $OUT as it goes): the GEMM op benchmark (seed 7 + the eight) and the
# GEMM GPU tests; flash attention correctness and benchmark; the MoE layer build, correctness
# and benchmark.   bash scripts/device_s8_final.sh   (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
( SEED=7 bash scripts/device_gemm_call.sh op; timeout 150 bash scripts/device_gemm_call.sh gputest ) > "$OUT/gemm.log" 2>&1
tail -12 "$OUT/gemm.log"; grep -A14 '"random_geomean' "$OUT/gemm.log" | head -16
OUT="$OUT/attention" bash scripts/device_attention.sh a > "$OUT/attention-a.log" 2>&1; tail -15 "$OUT/attention-a.log"
OUT="$OUT/attention" bash scripts/device_attention.sh c > "$OUT/attention-c.log" 2>&1; tail -25 "$OUT/attention-c.log"
OUT="$OUT/moe" bash scripts/device_moe.sh build > /dev/null 2>&1
OUT="$OUT/moe" bash scripts/device_moe.sh correct > "$OUT/moe-correct.log" 2>&1; tail -12 "$OUT/moe-correct.log"
OUT="$OUT/moe" bash scripts/device_moe.sh bench > "$OUT/moe-bench.log" 2>&1; tail -25 "$OUT/moe-bench.log"
