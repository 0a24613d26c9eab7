#!/usr/bin/env bash
# One H200 call for issue 8's last criterion (docs/agent.md, "The H200 check"), at most ~9.5 min:
#   bash scripts/device_agent.sh                      # the three shapes in one call
#   bash scripts/device_agent.sh 8192x8192x8192       # one shape (or any list) per call
#   DEADLINE=300 SELFCHECKS=1 bash scripts/device_agent.sh 4096x4096x4096
# 1. benchmarks/optimize_gemm.py on the shapes given (default its three) with --merge into
#    benchmarks/results/optimize_gemm.json (the shapes not given keep their earlier records,
#    each labelled with the run that measured it): the embedded planner from the library's
#    smallest valid configuration vs the hand-picked configurations, re-timed side by side;
#    it prints its estimate per shape first (calibrated on that file's evaluation times);
# 2. with SELFCHECKS=1 and the time left: the coder step's GPU path and `profile` with ncu
#    on one 2048^3 GEMM (both ran on 2026-12-02, rc 0; off by default to spare GPU time).
# Run it from the repo root through the device tool with carry [".whl"] (the z3-solver wheel,
# see docs/perf-log.md: the verifier needs z3, and the planner verifies every kernel it
# proposes). Everything lands in $OUT (default out/device-agent): optimize_gemm.json/.md,
# device_agent.log, nvidia-smi readings, and with SELFCHECKS=1 selfcheck-*.jsonl. Copy
# optimize_gemm.json/.md back into benchmarks/results/ before the next call, so that it
# merges into them.
set -uo pipefail
OUT="${OUT:-out/device-agent}"; mkdir -p "$OUT"
LIMIT=570                                   # seconds for this whole script (the call: 600)
SELFCHECKS="${SELFCHECKS:-0}"
if [ "$SELFCHECKS" = 1 ]; then DEADLINE="${DEADLINE:-400}"; else DEADLINE="${DEADLINE:-500}"; fi
SHAPE_ARGS=()
for shape in "$@"; do SHAPE_ARGS+=(--shape "$shape"); done
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
  run $(( ${DEADLINE%.*} + 40 )) python3 benchmarks/optimize_gemm.py --deadline "$DEADLINE" --merge ${SHAPE_ARGS[@]+"${SHAPE_ARGS[@]}"}
  cp benchmarks/results/optimize_gemm.json benchmarks/results/optimize_gemm.md "$OUT/" 2>/dev/null
  smi
  if [ "$SELFCHECKS" = 1 ]; then
    run 60 python3 -m argus.agent.gpu_selfcheck coder > "$OUT/selfcheck-coder.jsonl"
    run 60 python3 -m argus.agent.gpu_selfcheck profile > "$OUT/selfcheck-profile.jsonl"
    smi
  fi
  echo "== done after $SECONDS s"
} 2>&1 | tee "$OUT/device_agent.log"
