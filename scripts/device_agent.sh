#!/usr/bin/env bash
# One H200 call for issue 8's last criterion (docs/agent.md, "The H200 check"), at most ~9 min:
#   1. benchmarks/optimize_gemm.py on its three shapes (deadline 400 s, killed at 450 s):
#      the embedded planner from the library's smallest valid configuration vs the
#      hand-picked configurations, re-timed side by side; JSON + markdown report;
#   2. with the time left, the coder step's GPU path (a model-written kernel measured through
#      the harness child) and `profile` with ncu (--clock-control none) on one 2048^3 GEMM.
# Run it from the repo root through the device tool with carry [".whl"] (the z3-solver wheel,
# see docs/perf-log.md: the verifier needs z3, and the planner verifies every kernel it
# proposes). Everything lands in $OUT (default out/device-agent): optimize_gemm.json/.md,
# device_agent.log, selfcheck-coder.jsonl, selfcheck-profile.jsonl, nvidia-smi readings.
set -uo pipefail
OUT="${OUT:-out/device-agent}"; mkdir -p "$OUT"
LIMIT=540                                   # seconds for this whole script
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
unset ARGUS_GEMM_CONFIG
left() { echo $(( LIMIT - SECONDS )); }
run() {   # run SECONDS CMD...: at most SECONDS, and never past the script's limit
  local t=$1; shift
  local l; l=$(left)
  if [ "$l" -lt 20 ]; then echo "== skipped (only ${l} s left): $*" >&2; return 0; fi
  [ "$t" -gt "$l" ] && t=$l
  echo "== [$SECONDS s] (limit ${t} s) $*" >&2
  timeout --kill-after=5 "$t" "$@"; local rc=$?
  echo "== rc=$rc after $SECONDS s" >&2
}
smi() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> "$OUT/nvidia-smi.csv" 2>&1 || true; }
{
  python3 -c "import z3; print('z3', z3.get_version_string())" || echo "z3 MISSING: carry .whl (the verifier cannot run)"
  smi
  run 450 python3 benchmarks/optimize_gemm.py --deadline 400
  cp benchmarks/results/optimize_gemm.json benchmarks/results/optimize_gemm.md "$OUT/" 2>/dev/null
  smi
  run 60 python3 -m argus.agent.gpu_selfcheck coder > "$OUT/selfcheck-coder.jsonl"
  run 60 python3 -m argus.agent.gpu_selfcheck profile > "$OUT/selfcheck-profile.jsonl"
  smi
  echo "== done after $SECONDS s"
} 2>&1 | tee "$OUT/device_agent.log"
