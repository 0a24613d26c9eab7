#!/usr/bin/env bash
# Nsight Compute on two decode GEMMs (issue 18): argus.ops.matmul's kernel against cuBLAS's
# (torch.matmul) on 12x6144x4096 (x @ W.T) and 4x4096x4096 (x @ W), one profiled launch of
# each after warm-up: speed of light, memory workload, warp stalls, launch statistics.
#   bash scripts/device_decode_ncu.sh      (carry [".whl"]; text report in $OUT/ncu-decode.txt)
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
if [ -d .whl ] && ! python3 -c "import z3" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export ARGUS_CACHE_DIR="${ARGUS_CACHE_DIR:-/tmp/argus-cache}"
cat > /tmp/decode_gemms.py <<'PY'
import torch, argus.ops as ops
for m, n, k, layout in ((12, 6144, 4096, "nk"), (4, 4096, 4096, "kn")):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    b = w.t() if layout == "nk" else w.t().contiguous()
    for _ in range(3):
        ops.matmul(a, b); torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("decode")  # the profiled launches
    ops.matmul(a, b); torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
PY
timeout "${NCU_S:-150}" ncu --clock-control none --nvtx --nvtx-include "decode/" \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section LaunchStats --section Occupancy --section SchedulerStats \
  python3 /tmp/decode_gemms.py > "$OUT/ncu-decode.txt" 2>&1
echo "ncu rc=$?"
grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Grid Size|Registers Per|Achieved Occupancy|Stall|Compute \(SM\)" "$OUT/ncu-decode.txt" | head -80
