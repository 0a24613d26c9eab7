"""Destination-passing entry points for the evaluation harness (fn(inputs, outputs))."""

from __future__ import annotations


def matmul_kn(inputs, outputs):
    """a @ b with b K x N."""
    from argus.ops import matmul
    matmul(inputs[0], inputs[1], out=outputs[0])


def matmul_nk(inputs, outputs):
    """a @ b.T with b N x K (the problem's "nk" layout)."""
    from argus.ops import matmul
    matmul(inputs[0], inputs[1].t(), out=outputs[0])
