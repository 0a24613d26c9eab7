#!/usr/bin/env bash
# H200 call (issue 15): every example through `argus run` on the GPU (generated, built,
# launched on fresh random inputs with poisoned outputs, compared with its reference), at
# the default shape and at larger ones with tails where the kernel allows, then
# compute-sanitizer memcheck / racecheck / synccheck on each at its default shape.
#   bash scripts/device_examples.sh [run|sanitize|attention|vector|all]
# vector: the op-diff suite (prepare out/opdiff on the CPU first and carry it), every example,
# the GEMM GPU tests, memcheck/racecheck of the blocked-layout examples, copy bandwidth.
# Run from the repo root through the device tool with carry [".whl"] (z3 wheel); logs in $OUT.
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
PHASE="${1:-all}"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
A="python3 -m argus.cli.main"
run() { local t0=$SECONDS; echo "== $*"; timeout "$1" "${@:2}"; echo "rc=$? ($((SECONDS - t0))s)"; }
EXAMPLES=(
  "examples/copy.py::copy --shape M=128,N=128"
  "examples/copy.py::copy --shape M=1024,N=4096 --seed 3"
  "examples/gemm.py::gemm"
  "examples/flash_attention.py::flash_fwd --shape T=256"
  "examples/flash_attention.py::flash_fwd --shape T=1024 --seed 2"
  "examples/flash_attention.py::flash_fwd --shape T=512 --const CAUSAL=0 --seed 8"
  "examples/flash_attention.py::flash_fwd --shape T=512 --const HD=128 --seed 9"
  "examples/flash_attention.py::flash_fwd --shape T=1024 --const HD=128,CAUSAL=0 --seed 10"
  "examples/moe_route.py::moe_route --shape T=128,P=256"
  "examples/moe_route.py::moe_route --shape T=512,P=1024 --seed 5"
  "examples/moe_combine.py::moe_combine --shape T=128,N=128,P=256"
  "examples/moe_combine.py::moe_combine --shape T=512,N=512,P=1024 --seed 4"
  "examples/moe_gate_up.py::moe_gate_up"
  "examples/moe_gate_up.py::moe_gate_up --shape T=700,K=256,F=256,EF=2048,P=1400 --seed 6"
  "examples/moe.py::moe_grouped"
  "examples/moe.py::moe_grouped --shape T=1000,K=256,N=512,EN=4096 --seed 7"
)
runs() { for e in "${EXAMPLES[@]}"; do run 120 $A run $e; done; }
attention() {   # head dims 64 and 128, causal and not, then the sanitizers on d=128
  for e in "${EXAMPLES[@]}"; do case "$e" in *flash*) run 120 $A run $e;; esac; done
  for tool in memcheck racecheck synccheck; do
    for c in "CAUSAL=0" "HD=128" "HD=128,CAUSAL=0"; do
      run 120 compute-sanitizer --tool $tool --report-api-errors no $A run \
        examples/flash_attention.py::flash_fwd --shape T=256 --const $c
    done
  done
}
sanitize() {
  for tool in memcheck racecheck synccheck; do
    for e in "${EXAMPLES[@]}"; do
      case "$e" in *--seed*) continue;; esac
      run 120 compute-sanitizer --tool $tool --report-api-errors no $A run $e
    done
  done
}
vector() {
  run 240 python3 benchmarks/op_diff.py gpu out/opdiff --json "$OUT/op-diff.json"
  runs
  run 200 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_matmul_gpu.py
  for tool in memcheck racecheck; do
    for e in "examples/copy.py::copy --shape M=128,N=128" \
             "examples/moe_combine.py::moe_combine --shape T=128,N=128,P=256"; do
      run 120 compute-sanitizer --tool $tool --report-api-errors no $A run $e
    done
  done
  run 200 python3 benchmarks/copy_bandwidth.py --out "$OUT/copy-bandwidth.json"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
case "$PHASE" in
  run) runs ;; sanitize) sanitize ;; attention) attention ;; vector) vector ;;
  all) runs; sanitize ;;
  *) echo "unknown phase $PHASE"; exit 2 ;;
esac 2>&1 | tee "$OUT/examples-$PHASE.log"
