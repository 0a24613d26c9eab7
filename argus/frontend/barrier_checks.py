"""Whole-kernel diagnostics on the IR: a barrier that is waited on must be armed (some
arrive, expect_tx or TMA completes on it) and initialised somewhere in the kernel."""

from __future__ import annotations

from argus.ir.nodes import Kernel, Value

from .errors import DSLError

from argus.ir.ops import OPS

# the ops that arm the mbarrier they name `bar` (arrive on it, or complete on it), from the
# op table: arrive, expect_tx, tma.load, gather.tma, gather.cp_async
ARMS = tuple(s.opcode for s in OPS.values() if s.arrives == "bar" or s.completes == "mbarrier:bar")


def check_barriers(kernel: Kernel, lines: list[str]) -> None:
    array_of: dict[Value, Value] = {}
    armed, inited, waits = set(), set(), []
    for op in kernel.walk():
        if op.opcode == "mbarrier.at":
            array_of[op.results[0]] = op.arg("array")
    for op in kernel.walk():
        if op.opcode in ARMS:
            armed.add(array_of.get(op.arg("bar")))
        elif op.opcode == "mbarrier.init":
            inited.add(array_of.get(op.arg("bar")))
        elif op.opcode == "mbarrier.wait":
            waits.append((op, array_of.get(op.arg("bar"))))
    for op, array in waits:
        source = lines[op.loc.line - 1] if 0 < op.loc.line <= len(lines) else ""
        if array not in armed:
            raise DSLError(f"barrier {array.name} is waited on but never armed: no arrive, "
                           "expect_tx or TMA load completes on it anywhere in the kernel",
                           op.loc, f"the producer must arrive on {array.name}[s] (or "
                           f"expect_tx + tma_load with bar={array.name}[s]) for this wait "
                           "to return", source)
        if array not in inited:
            raise DSLError(f"barrier {array.name} is waited on but never initialised",
                           op.loc, f"mbarrier_init({array.name}[s], arrivals) for each stage, "
                           "then fence_mbarrier_init() and sync_block()", source)
