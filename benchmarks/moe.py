"""`python benchmarks/moe.py [...]` = `argus bench moe [...]` (argus/bench/moe_bench.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from argus.bench.moe_bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="benchmarks/moe.py"))
