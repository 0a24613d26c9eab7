"""`python benchmarks/attention.py [...]` = `argus bench attention [...]`
(argus/bench/attention_bench.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from argus.bench.attention_bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="benchmarks/attention.py"))
