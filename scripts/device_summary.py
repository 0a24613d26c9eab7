"""One line per row of the decode diagnoses (moe-decode-diag-*.json) and GEMM probes
(moe-gemm-probe-*.json) under a device call's output folder, the folder of each first (a
call's phases write to subfolders: old, new, pdl, ...).

    python3 scripts/device_summary.py OUT
"""
import glob
import json
import sys


def main(out: str) -> int:
    for f in sorted(glob.glob(out + "/**/moe-decode-diag-*.json", recursive=True)):
        for r in json.load(open(f))["rows"]:
            print(f.split("/")[-2], r["shape"], r["variant"],
                  "eager", round(r.get("eager_us", 0), 1), "graph", round(r.get("graph_us", 0), 1),
                  "host", round(r.get("host_us", 0), 1), "bw", round(r.get("bw_ratio_eager", 0), 3),
                  "err", r.get("rel_error"), "refilled", r.get("rel_error_refilled"),
                  r.get("kernels_us"), r.get("error", ""))
    for f in sorted(glob.glob(out + "/**/moe-gemm-probe-*.json", recursive=True)):
        for r in json.load(open(f))["rows"]:
            print(f.split("/")[-2], r["variant"], r.get("us"), r.get("ok"), r.get("bw_ratio"),
                  r.get("error", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
