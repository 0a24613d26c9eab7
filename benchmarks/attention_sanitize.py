"""A short run of the DSL flash attention for compute-sanitizer (memcheck, racecheck):
small shapes with tails, GQA, causal with SQ != SK, both layouts and head dims, each
checked against the float64 reference; exits 1 on a wrong result.

    compute-sanitizer --tool racecheck python benchmarks/attention_sanitize.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CASES = ["1x4x2x130x200x64c", "1x2x1x70x129x128", "1x4x4x190x190x128c:bshd",
         "1x2x2x33x300x64:bshd"]


def main(argv=None) -> int:
    from argus.bench.attention_bench import argus_attention, check_case, parse_case

    bad = 0
    for i, text in enumerate((argv if argv is not None else sys.argv[1:]) or CASES):
        r = check_case(parse_case(text), argus_attention, 77 + i, "cuda")
        print(f"{text}: {r['status']} {'; '.join(r['reasons'])}", flush=True)
        bad += r["status"] != "ok"
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
