#!/usr/bin/env bash
# One H200 call that does what the next session needs first (see docs/perf-log.md):
#   1. the GPU paths written after the last device budget ran out: `argus run` on the GPU,
#      `argus demo`'s GPU stage;
#   2. timing of the variants not yet measured (v2 at BN=256 for 256x8192x8192 x @ W, the
#      epilogue through shared memory + TMA store) next to the default;
#   3. split-K (2 and 4 splits) on the skinny shapes, its correctness sweep, and racecheck
#      of the epilogue variant.
# Run it from the repo root through the device tool with carry [".whl"] (z3 wheel, see
# docs/perf-log.md); everything it writes lands in $OUT (default: out/device).
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
run() { echo "== $*"; timeout "$1" "${@:2}"; echo "rc=$?"; }
{
  run 240 python3 -m pytest -q -x tests/ops/test_matmul_gpu.py tests/runtime/test_wrappers_on_gpu.py
  run 120 python3 -m argus.cli.main run argus/kernels/gemm.py::gemm_nt --shape M=1000,N=1032,K=520
  run 120 python3 -m argus.cli.main run argus/kernels/gemm_epilogue.py::gemm_nn_tma_epilogue --shape M=300,N=520,K=200
  run 180 python3 -m argus.cli.main demo --no-draw --atom 'wgmma_acc_m64n256'
  run 200 python3 -m argus.cli.main bench gemm --timing --layouts kn --dtypes bf16 --shapes 256x8192x8192,4096x4096x4096
  ARGUS_GEMM_CONFIG='{"EPILOGUE": "smem_tma", "S": 3}' \
    run 300 python3 -m argus.cli.main bench gemm --timing --layouts kn,nk --dtypes bf16 --shapes 8192x8192x8192,4096x4096x4096,4096x28672x4096,16384x8192x2048
  for split in 2 4; do
    ARGUS_GEMM_CONFIG="{\"SPLIT\": $split}" \
      run 150 python3 -m argus.cli.main bench gemm --timing --layouts kn,nk --dtypes bf16 --shapes 256x8192x8192,128x4096x4096
  done
  ARGUS_GEMM_CONFIG='{"SPLIT": 4}' run 200 python3 -m argus.cli.main bench gemm --correctness --layouts kn,nk --dtypes bf16,fp16
  ARGUS_GEMM_CONFIG='{"EPILOGUE": "smem_tma", "S": 3}' \
    run 120 compute-sanitizer --tool racecheck python3 benchmarks/gemm_sanitize.py
} 2>&1 | tee "$OUT/device_session.log"
cp benchmarks/results/gemm-*.json "$OUT/" 2>/dev/null || true
