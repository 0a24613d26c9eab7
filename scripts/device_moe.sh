#!/usr/bin/env bash
# H200 call (issue 17): the MoE layer (argus.ops.moe) on the GPU, in phases with time bounds.
#   bash scripts/device_moe.sh [all|build|correct|sanitize|racecheck|bench|sweep|breakdown][,...]
#   0 build     every kernel specialisation the run launches, built in parallel (disk cache)
#   a correct   correctness on small shapes (tails, empty expert, all-to-one, both combine
#               modes) against fp64 torch, and CUDA-graph capture/replay equality
#   b sanitize  compute-sanitizer memcheck of two small layers, prefill and decode
#               configurations (both combine modes)
#     racecheck compute-sanitizer racecheck of the same (the exchanges through shared memory)
#   c bench     timing against torch._grouped_mm and a cuBLAS loop, the shapes
#   d sweep     the knob sweep on two shapes
#   e breakdown each of the six launches timed alone (where the layer's time goes)
# Run from the repo root through the device tool with carry [".whl"] (z3 wheel). Outputs in
# $OUT: device_moe.log (everything), moe-*.json (the benchmark's results).
set -uo pipefail
source scripts/device_env.sh      # OUT, the z3 wheel, PYTHONPATH, the kernel cache
PHASE="${1:-all}"
LOG="$OUT/device_moe.log"
B="python3 benchmarks/moe.py --out $OUT"
TAIL=40
SMALL='
import torch, argus.ops as ops
from argus.bench.moe_bench import make_inputs
for t, e, k in ((77, 8, 2), (16, 64, 6), (1, 64, 6), (1, 8, 2)):   # prefill; decode, 128- and 64-wide tiles
    for det in (True, False):
        x, L, w13, w2 = make_inputs(torch, t, e, k, 256, 256, "random", 5, "cuda")
        out = ops.moe(x, L, w13, w2, k, True, det)
        torch.cuda.synchronize()
        print("T", t, "E", e, "finite", bool(torch.isfinite(out).all()), "deterministic", det)
'
build()    { nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee -a "$LOG"; run 200 $B --prebuild; }
correct()  { run 150 $B --correctness; }
sanitize() { run 120 compute-sanitizer --tool memcheck --report-api-errors no python3 -c "$SMALL"; }
racecheck() { run 120 compute-sanitizer --tool racecheck --report-api-errors no python3 -c "$SMALL"; }
bench()    { run 200 $B --timing; }
sweep()    { run 240 $B --sweep; }
breakdown() { run 150 $B --breakdown --shapes mixtral-4096,mixtral-512,finegrained-4096,small-experts-8192,decode-mixtral-16; }
for phase in ${PHASE//,/ }; do   # one phase, a comma-separated list, or all
  case "$phase" in
    build|correct|sanitize|racecheck|bench|sweep|breakdown) $phase ;;
    all) build; correct; sanitize; bench; sweep ;;
    *) echo "usage: $0 [all|build|correct|sanitize|racecheck|bench|sweep|breakdown][,...]"; exit 2 ;;
  esac
done
