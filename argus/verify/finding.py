"""What a verifier pass reports: a finding at a program point, with a counterexample.

Every pass (tag propagation, protocol, resources) returns a list of `Finding`s; the driver
sorts, prints (text or the JSON schema in docs/design/verifier.md) and draws them. A finding
names the user's source line, never a compiler internal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from argus.ir.nodes import Loc

# Warnings that report a cost, not something left unproved: the only findings that do not
# make a result "unverified" (every other warning says a check did not run, was not
# modelled or was not decided; a new warning is unverified unless it is named here).
ADVISORY_CHECKS = frozenset({"protocol.bank-conflict",   # shared-memory replays
                             "resources.register-spill"})  # local memory: slower, still right


@dataclass(frozen=True)
class ElementTag:
    """One tensor element involved in a violation: where it is, what it carries, what it should."""
    tensor: str                      # "A", "a_s[stage 1]", "acc", ...
    index: tuple[int, ...]           # logical coordinates of the element
    actual: dict[str, Any]           # the tag it carries, e.g. {"row": 64, "col": 3, "k": 0}
    expected: dict[str, Any]         # the tag the assertion wants


@dataclass(frozen=True)
class Counterexample:
    """Concrete values that make the violated condition false, minimised (smallest first)."""
    block: Optional[tuple[int, ...]] = None
    warpgroup: Optional[int] = None
    warp: Optional[int] = None
    lane: Optional[int] = None
    thread: Optional[int] = None              # thread index in the block
    register: Optional[int] = None            # fragment value index of that thread
    smem_byte: Optional[int] = None           # shared-memory byte offset, when a byte is named
    iteration: dict[str, int] = field(default_factory=dict)   # loop variable -> value
    sizes: dict[str, int] = field(default_factory=dict)       # shape symbol -> value (M, N, K)
    elements: tuple[ElementTag, ...] = ()
    barrier: Optional[str] = None             # "full[1]" when a barrier is named
    layout: Optional[str] = None              # the TV atom of the fragment `thread` holds
    cell: Optional[tuple[int, int]] = None    # (row, col) of that register in the atom's tile
    routing: dict[str, dict[int, int]] = field(default_factory=dict)  # array -> {index: value}
    # data inputs the violation needs (a row of logits a selection ranks wrongly):
    # tensor -> {flat index: value}; the elements not named may hold anything
    inputs: dict[str, dict[int, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("block", "warpgroup", "warp", "lane", "thread", "register", "smem_byte",
                    "barrier", "layout", "cell"):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        if self.iteration:
            out["iteration"] = dict(self.iteration)
        if self.sizes:
            out["sizes"] = dict(self.sizes)
        if self.routing:
            out["routing"] = {k: {str(i): v for i, v in d.items()} for k, d in self.routing.items()}
        if self.inputs:
            out["inputs"] = {k: {str(i): v for i, v in d.items()} for k, d in self.inputs.items()}
        if self.elements:
            out["elements"] = [{"tensor": e.tensor, "index": list(e.index),
                                "actual": e.actual, "expected": e.expected}
                               for e in self.elements]
        return out


@dataclass(frozen=True)
class Finding:
    check: str                        # stable id, e.g. "tag.store-coordinate", "protocol.parity"
    severity: str                     # "error" | "warning"
    message: str                      # one sentence, in the user's terms
    loc: Loc                          # the user's file:line:col of the offending op
    op: str                           # the DSL operation there, e.g. "wgmma", "wait"
    hint: str                         # one line: how to fix it
    counterexample: Optional[Counterexample] = None

    def __post_init__(self) -> None:
        if self.severity not in ("error", "warning"):
            raise ValueError(f"severity must be 'error' or 'warning', not {self.severity!r}")

    @property
    def unproved(self) -> bool:
        """A warning that leaves part of the kernel unverified (not modelled, undecided,
        a pass that crashed, a counterexample that did not replay)."""
        return self.severity == "warning" and self.check not in ADVISORY_CHECKS

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "severity": self.severity,
                               "unverified": self.unproved, "message": self.message,
                               "location": {"file": self.loc.file, "line": self.loc.line,
                                            "col": self.loc.col},
                               "op": self.op, "hint": self.hint}
        if self.counterexample is not None:
            out["counterexample"] = self.counterexample.to_json()
        return out

    def __str__(self) -> str:
        return f"{self.loc}: {self.severity}: {self.message} [{self.check}] (in {self.op}); hint: {self.hint}"
