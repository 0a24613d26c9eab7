#!/usr/bin/env bash
# The twelfth session's third H200 call: after the producer-wait change (every producer's wait
# inside its elect_one): (1) the GEMM's eight benchmark shapes, both layouts, bf16 (no
# regression?); (2) the library attention's benchmark (correctness of the timed shapes, then
# cuDNN and flash in the same run); (3) compute-sanitizer memcheck of a small MoE layer, both
# combine modes.   bash scripts/device_s12c.sh   (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
touch "$OUT/stamp"
timeout 170 python3 -m argus.cli.main bench gemm --timing --dtypes bf16 > "$OUT/gemm8.log" 2>&1; echo "gemm rc=$?"
find benchmarks/results -maxdepth 1 -newer "$OUT/stamp" -name '*.json' -exec cp {} "$OUT"/ \;
tail -14 "$OUT/gemm8.log"
OUT="$OUT/attention" bash scripts/device_attention.sh c > "$OUT/attention-c.log" 2>&1; tail -16 "$OUT/attention-c.log"
OUT="$OUT/moe" bash scripts/device_moe.sh sanitize > "$OUT/moe-sanitize.log" 2>&1; tail -8 "$OUT/moe-sanitize.log"
