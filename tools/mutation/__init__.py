"""Mutation testing of the verifier: source-level mutants of correct DSL kernels
(operators.py, sites.py), each run through the frontend, the verifier and the
interpreter (runner.py), and classified (classify.py): a mutant that computes a wrong
answer yet verifies clean is a missed bug."""

from tools.mutation.classify import CLASSES, classify
from tools.mutation.mutant import Mutant, generate_mutants

__all__ = ["CLASSES", "Mutant", "classify", "generate_mutants"]
