#!/usr/bin/env bash
# Device call (issue 17, twenty-eighth session): where the fine-grained T = 1 layer's down
# GEMM spends its ~35 us (39% of DRAM throughput; the same bytes with 224 k-steps an item
# run near the copy rate). 1) the kernels' GPU times at E = 8 for I = 1408, 2816, 5632
# (fixed cost against cost per k-step); 2) ncu's warp-stall samples per SASS instruction of
# moe_down (the report, then its source page as CSV, the 40 hottest instructions printed).
# From the repo root through the device tool with carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/down-sass.log"
TAIL=12 run 200 python3 scripts/device_moe_decode_diag.py --variants "default,gu S2 + dn S2,gu tma" --out "$OUT" \
  --shapes decode-finegrained-1 --extra "e8-i1408=1:8:6:2048:1408,e8-i2816=1:8:6:2048:2816,e8-i5632=1:8:6:2048:5632"
python3 - "$OUT" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/moe-decode-diag-*.json"):
    for r in json.load(open(f))["rows"]:
        print(r["shape"], {k: v for k, v in r.get("kernels_us", {}).items()})
PY
timeout 240 ncu --clock-control none --nvtx --nvtx-include "decode/" --kernel-name regex:"moe_(down|gate_up)" \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight -f -o "$OUT/t1" \
  python3 scripts/moe_profiled_layer.py > "$OUT/ncu-run.txt" 2>&1
echo "ncu rc=$?"; tail -3 "$OUT/ncu-run.txt"
for kern in moe_down moe_gate_up; do
  timeout 120 ncu --import "$OUT/t1.ncu-rep" --kernel-name "$kern" --page source --print-source sass --csv \
    > "$OUT/sass-$kern.csv" 2>&1
  echo "== $kern: $(wc -l < "$OUT/sass-$kern.csv") lines"
  python3 - "$OUT/sass-$kern.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next((i for i, r in enumerate(rows) if any("Source" == c or c.startswith("Source") for c in r)), None)
if head is None:
    print("\n".join(",".join(r)[:200] for r in rows[:15])); sys.exit()
cols = rows[head]
print(cols)
def num(x):
    try: return float(x.replace(",", ""))
    except Exception: return 0.0
samp = [i for i, c in enumerate(cols) if "Sampling" in c and "All" in c] or \
       [i for i, c in enumerate(cols) if "Sampling" in c]
src = [i for i, c in enumerate(cols) if c.startswith("Source")][0]
body = [r for r in rows[head + 1:] if len(r) == len(cols)]
total = sum(num(r[samp[0]]) for r in body) or 1
for r in sorted(body, key=lambda r: -num(r[samp[0]]))[:40]:
    print(f"{num(r[samp[0]]) / total:6.1%}", r[0][:8], r[src][:110], "|", ",".join(r[i] for i in samp[1:3]))
PY
done
# the breakdown's GPU times per kernel (gpu_us, torch.profiler) beside its launch timings
TAIL=4 run 60 python3 benchmarks/moe.py --out "$OUT" --breakdown --shapes decode-finegrained-1,decode-mixtral-1
