"""Operands by name: Op.arg / Op.args read the op table's positions, and the passes use
them (a standing guard: no `operands[<digit>]` in the verifier or the interpreter)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from argus.ir.nodes import Loc, Op, OperandNameError
from argus.ir.ops import OPS

ROOT = Path(__file__).resolve().parents[2]
LOC = Loc("t.py", 1, 1)

GUARDED = ("argus/verify", "argus/interp", "argus/codegen", "argus/frontend/barrier_checks.py")
EXEMPT: set[str] = set()     # none: every pass reads operands by the op table's names
POSITIONAL = re.compile(r"operands\s*\[\s*-?\d")


def _sources():
    for part in GUARDED:
        path = ROOT / part
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def test_no_positional_operands_in_the_passes():
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel in EXEMPT:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if POSITIONAL.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, ("read operands by the op table's names (op.arg(\"bar\"), "
                       "op.args(\"coords\")), not by position:\n" + "\n".join(found))


def test_the_guard_sees_the_passes():
    files = {p.relative_to(ROOT).as_posix() for p in _sources()}
    assert "argus/verify/protocol/ring.py" in files
    assert "argus/interp/ops/tma.py" in files
    assert {"argus/codegen/kernel.py", "argus/codegen/lower/tma.py",
            "argus/codegen/lower/indexed.py"} <= files
    assert "argus/frontend/barrier_checks.py" in files
    assert POSITIONAL.search("e.op.operands[2]") and POSITIONAL.search("op.operands[ 0 ]")
    assert not POSITIONAL.search("op.args(\"coords\")")


def _op(opcode, *operands):
    return Op(opcode, tuple(operands), (), {}, LOC)


def test_arg_reads_the_table_position():
    load = _op("tma.load", "dst", "src", "bar")
    assert (load.arg("dst"), load.arg("src"), load.arg("bar")) == ("dst", "src", "bar")
    gather = _op("gather.tma", "d", "s", "r", "c", "b")
    assert gather.arg("bar") == "b" and gather.arg("src") == "s"
    # the same name at another position in another opcode (the cache is per opcode)
    assert _op("load", "x").arg("src") == "x"
    assert _op("tma.store", "g", "s").arg("src") == "s"


def test_optional_operand():
    assert _op("tma.load", 1, 2, 3).arg("multicast") is None
    assert _op("tma.load", 1, 2, 3, 0b11).arg("multicast") == 0b11
    assert _op("mbarrier.arrive", "bar").arg("cta") is None
    assert _op("mbarrier.arrive", "bar", 1).arg("cta") == 1


def test_variadic_operand():
    assert _op("tile", "t", 1, 2).args("coords") == (1, 2)
    assert _op("tile", "t").args("coords") == ()
    assert _op("tile", "t", 1).arg("tensor") == "t"
    assert _op("schedule", 4, 5).args("extents") == (4, 5)
    assert _op("tag.assert", "a", "b").args("values") == ("a", "b")


def test_values_standing_for_the_operands():
    """The interpreter's rules read the evaluated operands by name the same way."""
    load = _op("tma.load", "dst", "src", "bar")
    assert load.arg("bar", ["D", "S", "B"]) == "B"
    assert load.arg("multicast", ["D", "S", "B"]) is None
    assert _op("tile", "t", 1, 2).args("coords", [10, 11, 12]) == [11, 12]
    with pytest.raises(IndexError):
        load.arg("bar", ["D"])


def test_every_operand_of_the_table_by_name():
    for spec in OPS.values():
        names = [o.name for o in spec.operands]
        operands = [f"v{i}" for i in range(len(names))]
        op = _op(spec.opcode, *operands)
        for i, o in enumerate(spec.operands):
            if o.variadic:
                assert op.args(o.name) == tuple(operands[i:]), (spec.opcode, o.name)
            else:
                assert op.arg(o.name) == operands[i], (spec.opcode, o.name)


def test_unknown_name_is_a_clear_error():
    with pytest.raises(OperandNameError, match=r"tma.load has no operand 'barrier'.*'bar'"):
        _op("tma.load", 1, 2, 3).arg("barrier")
    with pytest.raises(OperandNameError, match="unknown opcode"):
        _op("no.such.op").arg("x")
    # not a KeyError/IndexError: the interpreter turns those into kernel errors
    assert not issubclass(OperandNameError, (KeyError, IndexError))


def test_single_and_variadic_are_not_mixed_up():
    with pytest.raises(OperandNameError, match=r"variadic; read it with args\('coords'\)"):
        _op("tile", "t", 1).arg("coords")
    with pytest.raises(OperandNameError, match=r"single one; read it with arg\('tensor'\)"):
        _op("tile", "t", 1).args("tensor")


def test_missing_required_operand():
    with pytest.raises(IndexError, match="tma.load has 1 operand"):
        _op("tma.load", 1).arg("bar")


def test_tables_from_the_op_table_keep_the_passes_reading_what_they_did():
    """The passes that read the op table's reads/writes/asynchronous fields look only at
    shared-memory tiles; on those the fields give exactly the lists they used to spell out."""
    from argus.verify.protocol import proxy, stages

    def smem(table):
        out = {}
        for code, names in table.items():
            kinds = {o.name: o.kinds for o in OPS[code].operands}
            keep = tuple(n for n in names if "SmemTileType" in kinds[n])
            if keep:
                out[code] = keep
        return out

    # gather.cp_async's copies are ordinary (generic-proxy) writes too, landing later
    assert smem(proxy.GENERIC_WRITES) == {"store": ("dst",), "stmatrix": ("dst",),
                                          "gather.cp_async": ("dst",)}
    assert proxy.SELF_SIGNALLED == {"gather.cp_async"}
    assert smem(proxy.ASYNC_READS) == {"tma.store": ("src",), "wgmma.mma": ("a", "b")}
    assert smem(proxy.READS) == {"load": ("src",), "ldmatrix": ("src",),
                                 "tma.store": ("src",), "wgmma.mma": ("a", "b")}
    assert smem(stages.READS) == smem(proxy.READS)


def test_tma_completions_from_the_op_table():
    from argus.verify.protocol import ring

    assert sorted(ring.TMA_BAR) == ["gather.tma", "tma.load"]
    # the ops whose executing threads each arrive once: what mbarrier_init must count
    assert sorted(ring.ARRIVE_BAR) == ["gather.cp_async", "mbarrier.arrive", "mbarrier.expect_tx"]
    assert ring.COPY_ARRIVE == ("gather.cp_async",)
    assert ring.BAR_OPS == {"mbarrier.init", "mbarrier.arrive", "mbarrier.expect_tx",
                            "mbarrier.wait", "tma.load", "gather.tma", "gather.cp_async"}
