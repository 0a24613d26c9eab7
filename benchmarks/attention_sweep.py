"""The knob sweep of the DSL flash attention: each variant (a set of module constants of
argus/kernels/attention.py, through ARGUS_ATTENTION_CONFIG) timed against cuDNN on a few
shapes, after a correctness check of the variant on the same shape (sampled rows). One
JSON file: per shape and variant the time, TFLOP/s, the ratio to cuDNN, or the error.

    python benchmarks/attention_sweep.py [--out FILE] [--shapes ...] [--variants NAME,...]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SHAPES = ["4x16x16x4096x4096x128", "4x16x16x4096x4096x128c", "8x16x16x2048x2048x64c"]
# name -> the constants it sets (over the shape class's defaults); each FA3 technique on
# and off, one at a time, against the default
VARIANTS = {     # over the defaults (SPLIT_KV=1, MASK="edge", OVERLAP=0, LPT=0, FOLD_SCALE=1,
                 # PINGPONG=0)
    "default": {},
    "mask_all": {"MASK": "all"},               # every block masked (one key loop)
    "no_split_kv": {"SPLIT_KV": 0},            # K and V of a stage on one barrier
    "fold_scale": {"FOLD_SCALE": 1},           # exp2(s c - m c): one FMA an element
    "unfolded": {"FOLD_SCALE": 0},             # scores scaled before the max
    "stages2": {"S": 2},
    "stages4": {"S": 4},
    "pingpong_lpt": {"PINGPONG": 1, "LPT": 1},
    "overlap_bn64": {"OVERLAP": 1, "BN": 64},  # S of block j+1 under the softmax of j
    "lpt": {"LPT": 1},                         # longest query blocks first (causal)
    "bn64": {"BN": 64},
    "stages3": {"S": 3},
    "fold_lpt": {"FOLD_SCALE": 1, "LPT": 1},
    "fold_lpt_s3": {"FOLD_SCALE": 1, "LPT": 1, "S": 3},
    "pingpong": {"PINGPONG": 1},               # the consumers take turns at the tensor cores
    "pingpong_fold": {"PINGPONG": 1, "FOLD_SCALE": 1},
    "defer": {"DEFER": 1},                     # P V waited with the next block's S
    "defer_s3": {"DEFER": 1, "S": 3},
    "defer_pingpong": {"DEFER": 1, "PINGPONG": 1},
    "wgs3": {"WGS": 3},                        # three consumer warpgroups: 192 query rows
    "wgs3_s4": {"WGS": 3, "S": 4},
    # two blocks an SM, one consumer warpgroup each (64 query rows): a block's prologue and
    # epilogue under the other's key loop
    "occ2": {"WGS": 1, "BLOCKS_PER_SM": 2},
    "occ2_s2": {"WGS": 1, "BLOCKS_PER_SM": 2, "S": 2},
    "occ2_bn64": {"WGS": 1, "BLOCKS_PER_SM": 2, "BN": 64},
    "occ2_bn64_s2": {"WGS": 1, "BLOCKS_PER_SM": 2, "BN": 64, "S": 2},
    "occ2_nodefer_s2": {"WGS": 1, "BLOCKS_PER_SM": 2, "DEFER": 0, "S": 2},
    "occ2_bn64_nodefer_s2": {"WGS": 1, "BLOCKS_PER_SM": 2, "BN": 64, "DEFER": 0, "S": 2},
    "persist": {"PERSIST": 1},   # one block an SM walks the tiles (not causal)
    "nopersist": {"PERSIST": 0},  # one block a tile (the grid of tiles)
    # d = 64 on the persistent grid: more warps an SM to hide the softmax's latencies
    "persist_wgs3": {"PERSIST": 1, "WGS": 3},                  # 192-row tiles
    "persist_occ2": {"PERSIST": 1, "WGS": 1, "BLOCKS_PER_SM": 2},   # DEFER, 3 stages
    "occ2_defer_s3": {"WGS": 1, "BLOCKS_PER_SM": 2, "DEFER": 1, "S": 3},   # causal d = 64
    "lpt_on": {"LPT": 1, "HEAD_GROUP": 1},
    # the grid in launch order (the causal bhsd default of few-wave grids is lpt_g8 since
    # 2026-12-07: attention_configs.launch_order)
    "forward": {"LPT": 0, "HEAD_GROUP": 1},
    # the grid launched in reverse (each head's longest causal query block first, heads one
    # after another), and with the query blocks of g heads interleaved (bhsd)
    "lpt_g2": {"LPT": 1, "HEAD_GROUP": 2},
    "lpt_g4": {"LPT": 1, "HEAD_GROUP": 4},
    "lpt_g8": {"LPT": 1, "HEAD_GROUP": 8},
    "lpt_g16": {"LPT": 1, "HEAD_GROUP": 16},
    "persist_occ2_nodefer_s2": {"PERSIST": 1, "WGS": 1, "BLOCKS_PER_SM": 2, "DEFER": 0, "S": 2},
    "persist_nodefer": {"PERSIST": 1, "DEFER": 0},
    # causal on the persistent grid (walked ring positions; the walk's tile grid has the
    # query block slowest): the non-causal persistent configuration, and two blocks an SM
    "persist_causal": {"PERSIST": 1, "LPT": 0, "HEAD_GROUP": 1, "WGS": 2, "BLOCKS_PER_SM": 1,
                       "DEFER": 1, "S": 3},
    "persist_causal_occ2": {"PERSIST": 1, "LPT": 0, "HEAD_GROUP": 1, "WGS": 1,
                            "BLOCKS_PER_SM": 2, "DEFER": 1, "S": 3},
    # causal d = 64 on the d = 128 causal configuration (two consumer warpgroups, DEFER,
    # three stages, one block an SM) instead of the two-blocks-an-SM default
    "causal_wgs2": {"WGS": 2, "BLOCKS_PER_SM": 1, "DEFER": 1, "S": 3},
    "persist_causal_wgs3": {"PERSIST": 1, "LPT": 0, "HEAD_GROUP": 1, "WGS": 3,
                            "BLOCKS_PER_SM": 1, "DEFER": 1, "S": 3},
    # d = 64: 256 keys a block (half the blocks' fixed costs: waits, O's rescale, the
    # row reductions' shuffles; ptxas spills ~84 B), two stages
    "bn256_s2": {"BN": 256, "S": 2},
    "bn256_causal": {"BN": 256, "S": 2, "WGS": 2, "BLOCKS_PER_SM": 1, "DEFER": 1},
    # S of block j + 1 issued before the softmax of block j (FA3's intra-warpgroup overlap),
    # 128-key blocks, one block a tile (OVERLAP counts its ring from 0: not PERSIST)
    # one P register in n exp2'd on the FP32 units (a polynomial) instead of MUFU.EX2, the
    # bound of the d = 64 softmax (EXP2_POLY; the default's ring, grid and tiles otherwise)
    "poly2": {"EXP2_POLY": 2},
    "poly3": {"EXP2_POLY": 3},
    "poly4": {"EXP2_POLY": 4},
    "poly6": {"EXP2_POLY": 6},
    "poly8": {"EXP2_POLY": 8},
    "persist_wgs3_poly4": {"PERSIST": 1, "WGS": 3, "EXP2_POLY": 4},
    "persist_wgs3_poly8": {"PERSIST": 1, "WGS": 3, "EXP2_POLY": 8},
    "overlap128": {"OVERLAP": 1, "BN": 128, "S": 3, "DEFER": 0, "PERSIST": 0, "WGS": 2,
                   "BLOCKS_PER_SM": 1, "LPT": 0, "HEAD_GROUP": 1},
    "overlap128_s2": {"OVERLAP": 1, "BN": 128, "S": 2, "DEFER": 0, "PERSIST": 0, "WGS": 2,
                      "BLOCKS_PER_SM": 1, "LPT": 0, "HEAD_GROUP": 1},
    "wgs1": {"WGS": 1},     # one consumer warpgroup, one block an SM: 64-row query tiles
                            # (decode: a quarter of the padding rows' wasted work)
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="attention-sweep.json")
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--variants", default=",".join(VARIANTS))
    args = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("attention_sweep: no CUDA GPU here (nothing measured)", file=sys.stderr)
        return 2
    from argus.bench.attention_bench import argus_attention, check_case, parse_case, time_case

    rows = []
    for text in args.shapes.split(","):
        case = parse_case(text)
        for name in args.variants.split(","):
            os.environ["ARGUS_ATTENTION_CONFIG"] = json.dumps(VARIANTS[name])
            row = {"shape": text, "variant": name, "knobs": VARIANTS[name]}
            try:
                chk = check_case(case, argus_attention, 5, "cuda")
                row["correct"] = chk["status"] == "ok"
                row["reasons"] = chk["reasons"]
                if row["correct"]:
                    t = time_case(case, "cuda", rounds=3, reps=30)
                    row.update({k: t.get(k) for k in ("argus_ms", "argus_tflops", "cudnn_ms",
                                                      "cudnn_tflops", "ratio_cudnn")})
            except Exception as exc:      # noqa: BLE001 - a variant that fails is data
                row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
            rows.append(row)
            print(json.dumps(row), flush=True)
    os.environ.pop("ARGUS_ATTENTION_CONFIG", None)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=2)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
