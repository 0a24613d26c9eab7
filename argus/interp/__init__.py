"""The CPU interpreter: a NumPy twin of the code generator, driven by the same IR.

`argus.interp.machine` is the execution model (mbarriers, asynchronous copies and MMAs,
shared memory, a seeded scheduler of concurrent roles); the IR evaluator drives it.
"""
