"""How a DSL kernel runs when Python calls it: on the GPU (the default) or, with
ARGUS_INTERPRET=1 (or =exact, the fragment-exact mode), on the CPU interpreter; ARGUS_DEBUG=1
bounds every mbarrier wait of a GPU build. One switch for the library ops and for kernels
called like functions (argus.runtime.jit)."""

from __future__ import annotations

import os

from .interpreted import MODES, InterpretedLauncher


def interpret_mode() -> str | None:
    """None (GPU), "value" or "exact", from ARGUS_INTERPRET."""
    text = os.environ.get("ARGUS_INTERPRET", "").strip().lower()
    if text in ("", "0", "false", "no"):
        return None
    if text not in MODES and text not in ("true", "yes"):
        from .launch_errors import LaunchError
        raise LaunchError(f"ARGUS_INTERPRET={text!r}: use 1 (value mode), exact, or 0")
    return MODES.get(text, "value")


def debug_builds() -> bool:
    """ARGUS_DEBUG=1: every mbarrier wait is bounded and traps naming barrier and phase."""
    return os.environ.get("ARGUS_DEBUG", "") not in ("", "0")


def make_launcher(kernel_ir, mode: str | None, debug: bool):
    """The interpreter's launcher in an interpret mode, else the GPU build's."""
    if mode is not None:
        return InterpretedLauncher(kernel_ir, mode)
    from .compiled import build_launcher
    return build_launcher(kernel_ir, debug)
