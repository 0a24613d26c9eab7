"""The CPU interpreter: a NumPy twin of the code generator, driven by the same IR.

`argus.interp.machine` is the execution model (mbarriers, asynchronous copies and MMAs,
shared memory, a seeded scheduler of concurrent roles); the IR evaluator drives it.
"""


def __getattr__(name):
    """`from argus.interp import interpret` without importing the evaluator up front."""
    if name == "interpret":
        from argus.interp.evaluator import interpret
        return interpret
    raise AttributeError(f"module 'argus.interp' has no attribute {name!r}")
