"""A short run of the DSL flash attention for compute-sanitizer (memcheck, racecheck):
small shapes with tails, GQA, causal with SQ != SK, both layouts and head dims, decode
(one consumer warpgroup), and the knob sets that change the synchronisation (a persistent
grid of a few blocks walking many tiles, two blocks an SM), each checked against the
float64 reference; exits 1 on a wrong result.

    compute-sanitizer --tool racecheck python benchmarks/attention_sanitize.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (shape, knobs over the shipped defaults)
CASES = [("1x4x2x130x200x64c", {}), ("1x4x4x190x190x128c:bshd", {}),
         ("2x4x2x20x300x128", {}),                                   # decode: WGS = 1
         ("2x4x2x130x200x64", {"PERSIST": 1, "BLOCKS": 3}),
         ("2x4x2x190x190x128:bshd", {"PERSIST": 1, "BLOCKS": 2}),
         ("1x4x2x130x200x64c", {"WGS": 1, "BLOCKS_PER_SM": 2, "DEFER": 0, "S": 2}),
         # causal on the persistent grid: walked ring positions over tiles of 1-3 key blocks
         ("2x4x2x300x330x64c", {"PERSIST": 1, "BLOCKS": 3, "LPT": 0, "HEAD_GROUP": 1,
                                "WGS": 2, "BLOCKS_PER_SM": 1, "DEFER": 1, "S": 3})]


def main(argv=None) -> int:
    from argus.bench.attention_bench import argus_attention, check_case, parse_case

    bad = 0
    given = argv if argv is not None else sys.argv[1:]
    for i, (text, knobs) in enumerate([(t, {}) for t in given] or CASES):
        if knobs:
            os.environ["ARGUS_ATTENTION_CONFIG"] = json.dumps(knobs)
        else:
            os.environ.pop("ARGUS_ATTENTION_CONFIG", None)
        r = check_case(parse_case(text), argus_attention, 77 + i, "cuda")
        print(f"{text} {json.dumps(knobs)}: {r['status']} {'; '.join(r['reasons'])}", flush=True)
        bad += r["status"] != "ok"
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
