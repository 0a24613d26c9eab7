"""Surface functions are declarations: the frontend reads their signatures and
docstrings; calling one from Python is a mistake we explain."""

from __future__ import annotations

import functools


class NotExecutable(RuntimeError):
    pass


def surface(fn=None, *, builtin=None):
    """Mark a function as DSL surface: its body never runs. `@surface(builtin=f)` for a name
    that shadows a Python builtin (abs): called from Python it is that builtin, so that
    `from argus.lang import *` leaves host code (reference functions, inputs) working."""
    if fn is None:
        return functools.partial(surface, builtin=builtin)

    @functools.wraps(fn)
    def refuse(*args, **kwargs):
        if builtin is not None:
            return builtin(*args, **kwargs)
        raise NotExecutable(f"argus.{fn.__name__} is DSL surface: it only has meaning inside an "
                            "@argus.kernel body, which Argus parses from source and never runs")
    refuse.__argus_surface__ = fn.__module__.rsplit(".", 1)[-1]
    return refuse
