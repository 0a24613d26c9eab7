#!/usr/bin/env bash
# H200 run of the library flash attention (issue 16), in phases with a time bound each:
#   a) build every shipped configuration and check it on small shapes (tails, GQA, causal
#      with SQ != SK, lse, both layouts, bf16 and fp16) against float64
#   b) compute-sanitizer memcheck + racecheck on small shapes
#   c) the benchmark: correctness of the timed shapes, then timing against SDPA's cuDNN and
#      flash backends in the same run (JSON)
#   d) the knob sweep: variants timed on 3 shapes, so defaults can be picked (JSON)
#   bash scripts/device_attention.sh [a|b|c|d|all]      (about 8 minutes for all)
# Run from the repo root through the device tool with carry [".whl"] (the z3 wheel); logs
# and JSON in $OUT.
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
PHASE="${1:-all}"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
A="python3 -m argus.cli.main"
run() { local t0=$SECONDS; echo "== $*"; timeout "$1" "${@:2}"; echo "rc=$? ($((SECONDS - t0))s)"; }
phase_a() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv || true
  python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
  run 150 $A bench attention --correctness --dtypes bf16,fp16 --out "$OUT/attention-correctness.json"
}
phase_b() {
  for tool in memcheck racecheck; do
    run 90 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/attention_sanitize.py
  done
}
phase_c() {
  run 180 $A bench attention --out "$OUT/attention-bench.json"
}
phase_d() {
  run 120 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep.json"
}
case "$PHASE" in
  a) phase_a ;; b) phase_b ;; c) phase_c ;; d) phase_d ;;
  all) phase_a 2>&1 | tee "$OUT/a-correctness.log"; phase_b 2>&1 | tee "$OUT/b-sanitize.log"
       phase_c 2>&1 | tee "$OUT/c-bench.log"; phase_d 2>&1 | tee "$OUT/d-sweep.log" ;;
  *) echo "usage: $0 [a|b|c|d|all]"; exit 2 ;;
esac
