"""A candidate that dereferences a null pointer (SIGSEGV)."""
import ctypes


def matmul(inputs, outputs):
    ctypes.string_at(0)
