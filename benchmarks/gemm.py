"""`python benchmarks/gemm.py [...]` = `argus bench gemm [...]` (argus/bench/gemm_bench.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from argus.bench.gemm_bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(prog="benchmarks/gemm.py"))
