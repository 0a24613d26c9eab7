"""Tooling that works on Argus from outside the product: nothing under argus/ imports it.

mutation/: mutation testing of the verifier (benchmarks/mutation_report.py runs it).
"""
