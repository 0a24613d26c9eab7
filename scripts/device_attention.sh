#!/usr/bin/env bash
# H200 run of the library flash attention (issue 16), in phases with a time bound each:
#   a) build every shipped configuration and check it on small shapes (tails, GQA, causal
#      with SQ != SK, lse, both layouts, bf16 and fp16) against float64
#   b) compute-sanitizer memcheck + racecheck on small shapes
#   c) the benchmark: correctness of the timed shapes, then timing against SDPA's cuDNN and
#      flash backends in the same run (JSON)
#   d) the knob sweep: variants timed on 3 shapes, so defaults can be picked (JSON)
#   e) d = 64: the default against three consumer warpgroups (WGS = 3)
#   f) two blocks an SM (BLOCKS_PER_SM = 2) against the default, d = 64 and 128
#   g) a seeded random draw of shapes, correctness and timing (SEED, DRAW)
#   h) the persistent grid and two blocks an SM against the default (short sequences too)
#   i) d = 64 and causal: more warps an SM on the persistent grid, DEFER with two blocks, LPT
#   j) causal: the grid launched in reverse, with g heads' query blocks interleaved
#   bash scripts/device_attention.sh [a|b|c|d|e|ab|cd|all]   (phases in the order given)
# Typical total 5-8 minutes; the bounds add up to 630 s (a 120, b 2 x 80, c 150, d 200),
# over the device tool's 600 s a call at worst: "ab" then "cd" is the safe split.
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
  run 120 $A bench attention --correctness --dtypes bf16,fp16 --out "$OUT/attention-correctness.json"
}
phase_b() {
  for tool in memcheck racecheck; do
    run 80 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/attention_sanitize.py
  done
}
phase_c() {
  run 150 $A bench attention --out "$OUT/attention-bench.json"
}
phase_d() {
  run 200 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep.json"
}
# e) d = 64 only: the default against three consumer warpgroups (WGS = 3, 192-row tiles),
#    built and verified on 2026-12-06 but never timed (docs/perf-log.md, eighteenth session)
phase_e() {
  run 150 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-wgs3.json" \
    --shapes 16x16x16x1024x1024x64,8x16x16x2048x2048x64c,16x16x16x1024x1024x64:bshd \
    --variants default,wgs3,wgs3_s4
}
# f) two blocks an SM (BLOCKS_PER_SM = 2, one consumer warpgroup each) against the default,
#    on d = 64 (where the fixed cost of a block shows most) and d = 128
phase_f() {
  run 280 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-occ2.json" \
    --shapes 16x16x16x1024x1024x64,8x16x16x2048x2048x64c,4x16x16x4096x4096x64,4x16x16x4096x4096x128,4x16x16x4096x4096x128c,16x32x8x16x4096x128 \
    --variants default,occ2,occ2_s2,occ2_bn64,occ2_bn64_s2,occ2_nodefer_s2,wgs1
}
# g) a seeded random draw of shapes (argus.bench.attention_bench.random_cases): correctness
#    and timing of the shipped defaults on shapes no knob was chosen on (SEED=61 by default)
phase_g() {
  run 300 $A bench attention --random "${DRAW:-24}" --seed "${SEED:-61}" \
    --out "$OUT/attention-random-seed${SEED:-61}.json"
}
# h) the persistent grid (PERSIST, not causal) and two blocks an SM against the default, on
#    the non-causal shapes and the seed-61 draw's short sequences (a few key blocks
#    a query block: the fixed cost of a block shows), and the draw's short causal ones
phase_h() {
  run 300 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-persist.json" \
    --shapes 16x16x16x1024x1024x64,4x16x16x4096x4096x128,2x16x16x8192x8192x128,4x16x16x4096x4096x128:bshd,8x32x8x128x8192x128,64x64x8x443x443x128:bshd,64x16x1x331x331x128,64x12x12x409x317x128,64x32x8x1773x272x64,16x64x8x2756x2756x64:bshd,4x16x16x4096x4096x64 \
    --variants default,persist,persist_nodefer,occ2_nodefer_s2,persist_occ2_nodefer_s2
  run 120 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-short-causal.json" \
    --shapes 64x28x4x415x415x128c,64x64x8x453x453x64c,64x32x8x1527x1527x128c:bshd \
    --variants default,occ2_nodefer_s2,bn64
}
# i) d = 64 and GQA causal, the shapes under 0.85 of cuDNN on the defaults: more warps an SM
#    on the persistent grid (three consumer warpgroups; two blocks an SM with DEFER), causal
#    d = 64 two blocks an SM with DEFER on three stages, and LPT for the causal ones
phase_i() {
  run 200 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-d64.json" \
    --shapes 16x16x16x1024x1024x64,4x16x16x4096x4096x64 --variants default,persist_wgs3,persist_occ2
  run 150 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-causal.json" \
    --shapes 8x16x16x2048x2048x64c,4x32x8x4096x4096x128c,4x16x16x4096x4096x128c \
    --variants default,occ2_defer_s3,lpt_on
}
# j) causal: the grid launched in reverse (LPT: each head's longest query block first, heads
#    one after another) and with the query blocks of g heads interleaved (HEAD_GROUP, bhsd):
#    list-scheduling estimate 4-7% over the forward order's makespan on the causal
#    shapes, 0.3-1.5% with g = 4-8 (docs/perf-log.md, twenty-first session)
phase_j() {
  run 450 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-lpt.json" \
    --shapes 8x16x16x2048x2048x64c,4x16x16x4096x4096x128c,4x32x8x4096x4096x128c,1x16x16x16384x16384x128c \
    --variants default,lpt_on,lpt_g4,lpt_g8,lpt_g16
}
[ "$PHASE" = all ] && PHASE=abcd
case "$PHASE" in *[!abcdefghij]*|"") echo "usage: $0 [a|b|c|d|e|f|g|h|ab|cd|all]"; exit 2 ;; esac
for ((i = 0; i < ${#PHASE}; i++)); do
  p="${PHASE:$i:1}"
  case "$p" in
    a) phase_a 2>&1 | tee "$OUT/a-correctness.log" ;;
    b) phase_b 2>&1 | tee "$OUT/b-sanitize.log" ;;
    c) phase_c 2>&1 | tee "$OUT/c-bench.log" ;;
    d) phase_d 2>&1 | tee "$OUT/d-sweep.log" ;;
    e) phase_e 2>&1 | tee "$OUT/e-wgs3.log" ;;
    f) phase_f 2>&1 | tee "$OUT/f-occ2.log" ;;
    g) phase_g 2>&1 | tee "$OUT/g-random.log" ;;
    h) phase_h 2>&1 | tee "$OUT/h-short.log" ;;
    i) phase_i 2>&1 | tee "$OUT/i-d64-causal.log" ;;
    j) phase_j 2>&1 | tee "$OUT/j-lpt.log" ;;
  esac
done
