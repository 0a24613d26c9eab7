#!/usr/bin/env bash
# H200 run of issue 20's last item: the embedded attention planner against every
# configuration of the library kernel's space, on three shapes (scripts/device_attention_planner.py).
# Run from the repo root through the device tool with carry [".whl"] (the z3 wheel);
# expected 4-7 minutes (an estimate: ~600 check+time jobs of 0.2-0.4 s, ~600 builds of ~1 s on
# 14 processes, three planner runs of 16 evaluations), bounded at 570 s (exhaustive timings stop
# being started at DEADLINE_S=480); the JSON goes to $OUT (commit it under benchmarks/results/).
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
# the builds import the verifier's z3 (argus.ops.library checks before it generates)
if [ -d .whl ] && ! python3 -c "import z3" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export ARGUS_CACHE_DIR="${ARGUS_CACHE_DIR:-/tmp/argus-cache}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader || true
stamp=$(date -u +%Y%m%d-%H%M%S)
json="$OUT/attention-planner-$stamp.json"   # written after every shape: a kill keeps it
timeout 570 python3 scripts/device_attention_planner.py --deadline-s "${DEADLINE_S:-480}" \
  --out "$json" "$@" 2>&1 | tee "$OUT/attention-planner.log"
rc=${PIPESTATUS[0]}
cp "$json" benchmarks/results/ 2>/dev/null || true
echo "rc=$rc"
