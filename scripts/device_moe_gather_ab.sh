#!/usr/bin/env bash
# H200 call (issue 17): the gate-up's token-row gather, GATHER "tma" (one thread issues 128
# one-row TMA boxes a stage) against "warpgroup" (gather_cp_async: every producer thread
# copies 16-byte chunks with cp.async), both forms in one run (scripts/device_moe_gather_ab.py):
#   build    every kernel both forms launch, in parallel, with the gate-ups' ptxas reports
#   time     Mixtral T=512 and 4096, fine-grained T=4096: the layer (argus.ops.moe) and the
#            gate-up alone for both forms in alternating rounds, then the peers once
#   correct  the layer's correctness cases against fp64 torch, both forms
# ~8 minutes at most (each phase under its own timeout); progress on every step.
#   bash scripts/device_moe_gather_ab.sh [all|build|time|correct][,...]
# Run from the repo root through the device tool with carry [".whl"] (the z3 wheel,
# docs/perf-log.md). Outputs in $OUT: device_moe_gather_ab.log, moe-gather-ab-*.json.
set -uo pipefail
source scripts/device_env.sh      # OUT, the z3 wheel, PYTHONPATH, the kernel cache
PHASE="${1:-all}"
LOG="$OUT/device_moe_gather_ab.log"
AB="python3 scripts/device_moe_gather_ab.py"
# the many-experts case last: its 128-expert routing kernels are the slowest to build, should
# the build phase not have finished them
CASES="tails,one-token,empty-expert,all-to-one,finegrained-tails,mixtral-tail,decode-16,many-experts"
build()   { nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee -a "$LOG"; run 200 $AB build --out "$OUT" --cases "$CASES"; }
time_()   { run 170 $AB time --out "$OUT"; }
correct() { run 100 $AB correct --out "$OUT" --cases "$CASES"; }
for phase in ${PHASE//,/ }; do
  case "$phase" in
    build) build ;;
    time) time_ ;;
    correct) correct ;;
    all) build; time_; correct ;;
    *) echo "usage: $0 [all|build|time|correct][,...]"; exit 2 ;;
  esac
done
