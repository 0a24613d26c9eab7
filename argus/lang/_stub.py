"""Surface functions are declarations: the frontend reads their signatures and
docstrings; calling one from Python is a mistake we explain."""

from __future__ import annotations

import functools


class NotExecutable(RuntimeError):
    pass


def surface(fn):
    """Mark a function as DSL surface: its body never runs."""
    @functools.wraps(fn)
    def refuse(*args, **kwargs):
        raise NotExecutable(f"argus.{fn.__name__} is DSL surface: it only has meaning inside an "
                            "@argus.kernel body, which Argus parses from source and never runs")
    refuse.__argus_surface__ = fn.__module__.rsplit(".", 1)[-1]
    return refuse
