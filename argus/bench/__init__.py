"""The evaluation harness: correctness oracle, device timing, isolation, results.

Every benchmark and the agent go through it. See docs/harness.md for the threat model.
"""
from argus.bench.evaluate import evaluate
from argus.bench.isolation import run_isolated
from argus.bench.oracle import Tolerance, check_once, run_checks
from argus.bench.problems import MatmulProblem, Problem, matmul
from argus.bench.results import build_record, write_record
from argus.bench.timing import TimingConfig, TimingUnavailable

__all__ = ["evaluate", "run_isolated", "Tolerance", "check_once", "run_checks",
           "MatmulProblem", "Problem", "matmul", "build_record", "write_record",
           "TimingConfig", "TimingUnavailable"]
