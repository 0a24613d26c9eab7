#!/usr/bin/env bash
# H200 calls of this session, one phase per device call (each well under 10 minutes):
#   bash scripts/device_session.sh check    GPU tests, `argus run` and `argus demo` on the GPU,
#                                           racecheck of the epilogue variant (issue 5)
#   bash scripts/device_session.sh perf     cuBLAS's kernel choices, ncu of 4096^3 (ours and
#                                           cuBLAS), timing of the default and the variants (issue 6)
#   bash scripts/device_session.sh perf2    v3: GPU tests of every variant, then clusters, the TMA-store
#                                           epilogue and the skinny variants against cuBLAS (issue 6)
#   bash scripts/device_session.sh tune     sweep of the variants per shape (benchmarks/gemm_sweep.py),
#                                           then `argus bench gemm` with the fastest per shape
#   bash scripts/device_session.sh final    sanitize, then `argus bench gemm` bf16 x@W and x@W.T with
#                                           the tuned table (issues 5 and 6)
#   bash scripts/device_session.sh probe    skinny-shape variance, raster/BN=192 knobs, fp16 (issue 6)
#   bash scripts/device_session.sh depth    ring depth vs epilogue on the 4096-class, ncu stall reasons
#   bash scripts/device_session.sh chunks   the 64-column-block TMA epilogue (4 stages) vs the tuned table
#   bash scripts/device_session.sh all      check, perf, then racecheck
# Run it from the repo root through the device tool with carry [".whl"] (z3 wheel, see
# docs/perf-log.md); everything it writes lands in $OUT (default: out/device).
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
PHASE="${1:-all}"; touch "$OUT/.start"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
A="python3 -m argus.cli.main"
run() { local t0=$SECONDS; echo "== $*"; timeout "$1" "${@:2}"; echo "rc=$? (${SECONDS}s after $((SECONDS - t0))s)"; }
bench() { run "$1" $A bench gemm --timing --dtypes bf16 "${@:2}"; }
check() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
  run 200 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_matmul_gpu.py tests/runtime/test_wrappers_on_gpu.py
  run 60 $A run argus/kernels/gemm.py::gemm_nt --shape M=1000,N=1032,K=520
  run 60 $A run argus/kernels/gemm.py::gemm_nn --shape M=300,N=520,K=200
  run 90 $A demo --no-draw --atom 'wgmma_acc_m64n256'
}
sanitize() {   # every shipped variant (benchmarks/gemm_sanitize.py), under each tool
  for tool in memcheck racecheck synccheck; do
    run 150 compute-sanitizer --tool $tool python3 benchmarks/gemm_sanitize.py
  done
}
perf() {
  run 60 python3 benchmarks/cublas_kernels.py
  bench 170 --layouts kn
  ARGUS_GEMM_CONFIG='{"EPILOGUE": "smem_tma", "S": 3}' \
    bench 90 --layouts kn --shapes 8192x8192x8192,4096x4096x4096,4096x28672x4096,16384x8192x2048
  for split in 2 4; do
    ARGUS_GEMM_CONFIG="{\"SPLIT\": $split, \"BN\": 128, \"S\": 6}" bench 50 --layouts kn --shapes 256x8192x8192,128x4096x4096
  done
  run 100 ncu --clock-control none --profile-from-start off --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    python3 benchmarks/gemm_profile.py 4096x4096x4096 kn > "$OUT/ncu-4096.txt" 2>&1
  echo "ncu rc=$?"; grep -E "gemm_nn|nvjet|sm90|Throughput|Duration|Hit Rate|Stall|Warp Cycles" "$OUT/ncu-4096.txt" | head -60
}
LARGE=8192x8192x8192,4096x4096x4096,4096x12288x4096,4096x28672x4096,4096x4096x14336,16384x8192x2048
SKINNY=256x8192x8192,128x4096x4096
cfg() { ARGUS_GEMM_CONFIG="$1" bench "${@:2}"; }
perf2() {   # v3: clusters with B multicast, the TMA-store epilogue, skinny variants
  run 240 python3 -m pytest -q -p no:cacheprovider tests/ops/test_matmul_gpu.py
  run 60 $A demo --no-draw --atom 'wgmma_acc_m64n256'
  python3 -c "
from argus.ops.library import generated
from argus.runtime import BuildOptions, build_kernel
e = build_kernel(generated('gemm', 'gemm_nt').source, BuildOptions())
print('compiler:', e.compiler); print('log:', e.log[:600])" 2>&1 | tail -12
  cfg '{}' 110 --layouts kn --shapes $LARGE,$SKINNY
  cfg '{"CM": 2}' 80 --layouts kn --shapes $LARGE
  cfg '{"CM": 2, "EPILOGUE": "smem_tma", "S": 3}' 80 --layouts kn --shapes $LARGE
  cfg '{"EPILOGUE": "smem_tma", "S": 3}' 80 --layouts kn --shapes $LARGE
  cfg '{"CM": 2, "BN": 128, "S": 6}' 40 --layouts kn,nk --shapes $SKINNY
  cfg '{"CM": 2, "BN": 256, "S": 4}' 25 --layouts kn,nk --shapes 256x8192x8192
  cfg '{"SPLIT": 2, "BN": 64, "S": 8}' 25 --layouts kn --shapes 128x4096x4096
  cfg '{"SPLIT": 2, "BN": 128, "S": 6}' 25 --layouts kn --shapes 256x8192x8192
  cfg '{"CM": 2, "EPILOGUE": "smem_tma", "S": 3}' 80 --layouts nk --shapes $LARGE
}
final() {  # issue 5's sanitizer runs, then the tuned table in the full harness, both B layouts
  sanitize
  bench 330 --layouts kn,nk
}
probe() {  # how much the skinny shapes move between measurements; raster and BN=192 on the
            # 4096-class shapes; fp16 in the full harness; memcheck without host API errors
  run 60 compute-sanitizer --tool memcheck --report-api-errors no python3 benchmarks/gemm_sanitize.py
  run 130 python3 benchmarks/gemm_sweep.py --plan benchmarks/plans/skinny-variance.json --repeat 3
  run 230 python3 benchmarks/gemm_sweep.py --plan benchmarks/plans/large-knobs.json --repeat 2
  run 130 $A bench gemm --timing --dtypes fp16 --layouts kn,nk
}
probe2() { # BN=192 on the other large shapes and x @ W.T's own choices; 256x8192x8192 launch by
            # launch under ncu (does a slow launch read B twice from DRAM?); the full harness
  run 200 python3 benchmarks/gemm_sweep.py --plan benchmarks/plans/bn192-and-nk.json --repeat 2
  run 120 ncu --cache-control none --clock-control none --kernel-name regex:'gemm|nvjet|sm90' \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    python3 benchmarks/gemm_profile.py 256x8192x8192 nk '{"BN": 128}' 8 > "$OUT/ncu-256-launches.txt" 2>&1
  echo "ncu rc=$?"; grep -E "gemm_n|nvjet|sm90|duration|dram__bytes|hit_rate" "$OUT/ncu-256-launches.txt" | head -80
  bench 150 --layouts kn,nk
}
clusters() {  # 2-block clusters on the 4096-class shapes, judged by the full harness itself
  local big=4096x4096x4096,4096x12288x4096,4096x28672x4096,4096x4096x14336,16384x8192x2048
  for layout in kn nk; do
    cfg '{}' 60 --layouts $layout --shapes $big
    cfg '{"CM": 2}' 60 --layouts $layout --shapes $big,256x8192x8192
    cfg '{"CM": 2, "EPILOGUE": "direct", "S": 4}' 60 --layouts $layout --shapes $big
  done
  run 60 ncu --cache-control none --clock-control none --kernel-name regex:'gemm|nvjet|sm90' \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    python3 benchmarks/gemm_profile.py 256x8192x8192 nk '{"BN": 128, "cluster_m": 2}' 4 > "$OUT/ncu-256-cm2.txt" 2>&1
  grep -E "^  [a-z]|duration|dram__bytes" "$OUT/ncu-256-cm2.txt" | head -30
}
depth() {  # does the ring's depth bound the 4096-class mainloop? (the TMA-store epilogue's
           # 64 KB tile leaves 3 stages); ncu stall reasons of ours and cuBLAS at long K
  local s=4096x4096x4096,4096x4096x14336,4096x28672x4096
  cfg '{}' 60 --layouts kn --shapes $s
  cfg '{"S": 2}' 60 --layouts kn --shapes $s
  cfg '{"EPILOGUE": "direct", "S": 4}' 60 --layouts kn --shapes $s
  cfg '{"EPILOGUE": "direct", "S": 3}' 60 --layouts kn --shapes $s
  run 150 ncu --clock-control none --kernel-name regex:'gemm|nvjet|sm90' --metrics \
    gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_active.avg,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
    python3 benchmarks/gemm_profile.py 4096x4096x14336 kn '{}' 2 > "$OUT/ncu-14336-stalls.txt" 2>&1
  echo "ncu rc=$?"; grep -vE "^==PROF==" "$OUT/ncu-14336-stalls.txt" | grep -E "^  [a-z]|[0-9]$" | head -120
}
chunks() {  # the epilogue in 64-column blocks (room for a 4th stage): GPU tests, racecheck,
            # then the harness against the tuned table in the same call, both layouts
  run 200 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_matmul_gpu.py -k tma_chunks
  run 100 compute-sanitizer --tool racecheck python3 benchmarks/gemm_sanitize.py tma_chunks cluster2_tma_chunks
  for layout in kn nk; do
    cfg '{}' 75 --layouts $layout --shapes $LARGE
    cfg '{"EPILOGUE": "tma_chunks", "S": 4}' 75 --layouts $layout --shapes $LARGE
  done
  cfg '{}' 40 --layouts kn,nk --shapes 256x8192x8192
  cfg '{"EPILOGUE": "tma_chunks", "BN": 128, "S": 6}' 40 --layouts kn,nk --shapes 256x8192x8192
}
skinny() {  # the chunked epilogue's GPU tests again (small shapes widen BN to 128), then where
            # 256x8192x8192's slow calls come from: host cost per call, eager vs graph replay
  run 200 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_matmul_gpu.py -k tma_chunks
  run 120 python3 benchmarks/gemm_launch_probe.py 256x8192x8192
}
report2() { # after the launcher's prepared parameters: every GPU test, the host cost per call
            # again, the skinny shape's chunked variant, then the numbers to report
  run 200 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_matmul_gpu.py tests/runtime/test_wrappers_on_gpu.py
  run 60 python3 benchmarks/gemm_launch_probe.py 256x8192x8192
  cfg '{"EPILOGUE": "tma_chunks", "BN": 128, "S": 6}' 40 --layouts kn,nk --shapes 256x8192x8192
  report
}
report() {  # the numbers to report: the tuned table in the full harness, bf16 and fp16, both layouts
  run 330 $A bench gemm --timing --dtypes bf16,fp16 --layouts kn,nk
}
tune() {    # v3b: sweep the variants per shape, then the full harness with the winners
  run 100 python3 -m pytest -q -x -p no:cacheprovider tests/ops/test_matmul_gpu.py
  run 230 python3 benchmarks/gemm_sweep.py --out "$OUT/gemm_tuned.json"
  ARGUS_GEMM_TUNED="$OUT/gemm_tuned.json" bench 240 --layouts kn
}
{
  case "$PHASE" in
    check) check; sanitize ;;
    sanitize) sanitize ;;
    perf) perf ;;
    perf2) perf2 ;;
    tune) tune ;;
    final) final ;;
    probe) probe ;;
    probe2) probe2 ;;
    clusters) clusters ;;
    report) report ;;
    depth) depth ;;
    chunks) chunks ;;
    skinny) skinny ;;
    report2) report2 ;;
    *) check; perf; sanitize ;;
  esac
} 2>&1 | tee "$OUT/device_session-$PHASE.log"
find benchmarks/results -newer "$OUT/.start" -type f | tar czf "$OUT/results-$PHASE.tgz" -T - 2>/dev/null || true
