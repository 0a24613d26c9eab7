"""Helpers for writing rules: plain functions as rules, reading fragment values."""

from __future__ import annotations

import functools

from ..machine import RegisterFragment


def pure(fn):
    """A rule that yields nothing: fn(agent, op, args) -> result."""
    @functools.wraps(fn)
    def rule(agent, op, args):
        return fn(agent, op, args)
        yield  # noqa: unreachable; makes this a generator
    return rule


def values(x):
    """The fp32 values of a fragment (registers or an array) or a scalar."""
    if isinstance(x, RegisterFragment):
        return x.read()
    return x
