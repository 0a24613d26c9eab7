"""Semantic rules for each surface function, one module per op family: they check
arguments (shapes, dtypes, layouts, memory spaces) and emit IR through the visitor."""

from __future__ import annotations

from . import mbarrier, memory, math, matrix, scan, structure, sync, tags, tma, wgmma  # noqa: F401
from .base import RULES, Args

__all__ = ["RULES", "Args"]
