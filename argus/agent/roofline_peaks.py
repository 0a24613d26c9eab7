"""argus/bench/roofline.py (peak table, roofline floor, plausibility) without torch.

roofline.py itself is pure Python, but importing it as argus.bench.roofline runs the
argus.bench package, which imports torch; the cost model and the CPU-only planner must
not need torch. So the module is loaded from its file on its own. One source of truth for
the peaks, none copied.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_NAME = "argus.bench.roofline"
if _NAME in sys.modules:
    roofline = sys.modules[_NAME]
else:
    _spec = importlib.util.spec_from_file_location(
        "argus_agent_roofline", Path(__file__).resolve().parents[1] / "bench" / "roofline.py")
    roofline = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(roofline)

PEAKS = roofline.PEAKS
bound_seconds = roofline.bound_seconds
plausibility = roofline.plausibility
