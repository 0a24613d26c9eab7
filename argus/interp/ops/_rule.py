"""Helpers for writing rules: plain functions as rules, reading fragment values."""

from __future__ import annotations

import functools

from ..exact.regs import Regs
from ..machine import RegisterFragment


def pure(fn):
    """A rule that yields nothing: fn(agent, op, args) -> result."""
    @functools.wraps(fn)
    def rule(agent, op, args):
        return fn(agent, op, args)
        yield  # noqa: unreachable; makes this a generator
    return rule


def values(x):
    """The logical fp32 values of a fragment (registers, exact-mode registers through their
    layout, or an array) or a scalar."""
    if isinstance(x, (RegisterFragment, Regs)):
        return x.logical()
    return x
