"""The op table: every family registered, specs consistent, contracts present as data."""

from argus.ir.ops import OPS
from argus.ir.ops.spec import Operand


def test_every_family_has_ops():
    assert {s.family for s in OPS.values()} == {"arith", "structure", "memory", "mbarrier", "tma",
                                               "wgmma", "matrix", "sync", "math", "tag"}


def test_effects_name_real_operands():
    for spec in OPS.values():
        names = {o.name for o in spec.operands}
        assert set(spec.reads) <= names and set(spec.writes) <= names, spec.opcode


def test_wgmma_declares_k_contract():
    contracts = {c.name: c.relation for c in OPS["wgmma.mma"].contracts}
    assert contracts["k_match"] == "A.k == B.k for every k step"
    assert OPS["wgmma.mma"].asynchronous and OPS["tma.load"].asynchronous


def test_variadic_operands_are_last():
    for spec in OPS.values():
        flags = [o.variadic for o in spec.operands]
        assert True not in flags[:-1], spec.opcode
