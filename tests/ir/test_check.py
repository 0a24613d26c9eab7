"""Well-formedness rules, one test per rule, each on hand-built IR."""

import pytest

from argus.ir import Block, IRError, Kernel, Launch, Loc, Op, Value, check_kernel
from argus.ir.check import problems
from argus.ir.tagexpr import BinExpr, CoordOf, TagField
from argus.ir.types import INDEX, PRED, BarrierArrayType, BarrierType, DType, FragmentType

L = Loc("t.py", 7, 3)
FRAG = FragmentType((64, 64), DType.fp32, "blocked")


def kernel(*ops, block=128):
    return Kernel("k", (), (), {}, Launch(("1",), block, (1, 1, 1)), Block(list(ops)), L)


def rules(k):
    return [p.rule for p in problems(k)]


def test_good_kernel_passes():
    x = Value("x", INDEX)
    y = Value("y", INDEX)
    k = kernel(Op("block_id", (), (x,), {"axis": "x"}, L), Op("arith.add", (x, 1), (y,), {}, L))
    assert check_kernel(k) is k


def test_unknown_opcode():
    assert rules(kernel(Op("wgmma.mmaa", (), (), {}, L))) == ["known-opcode"]


def test_arity_missing_operand_and_extra_result():
    bar = Value("b", BarrierType("full"))
    extra = Value("r", INDEX)
    k = kernel(Op("mbarrier.wait", (), (extra,), {}, Loc("t.py", 9, 1)))
    found = problems(k)
    assert [p.rule for p in found] == ["arity", "arity", "arity"]
    assert "missing operand bar" in str(found[0]) and str(found[0]).startswith("t.py:9:1: mbarrier.wait")


def test_operand_kind():
    arr = Value("full", BarrierArrayType(2))
    alloc = Op("mbarrier.alloc", (), (arr,), {"count": 2}, L)
    k = kernel(alloc, Op("mbarrier.arrive", (arr,), (), {}, L))
    (p,) = problems(k)
    assert p.rule == "operand-kind" and "BarrierArrayType" in p.message


def test_use_before_definition():
    x, y = Value("x", INDEX), Value("y", INDEX)
    k = kernel(Op("arith.add", (x, 1), (y,), {}, L), Op("block_id", (), (x,), {}, L))
    (p,) = problems(k)
    assert p.rule == "def-before-use" and "%x" in p.message


def test_value_defined_in_region_is_not_visible_after_it():
    i, y, z = Value("i", INDEX), Value("y", INDEX), Value("z", INDEX)
    loop = Op("for", (0, 4, 1), (), {}, L,
              (Block([Op("arith.add", (i, 1), (y,), {}, L)], (i,)),))
    k = kernel(loop, Op("arith.add", (y, 1), (z,), {}, L))
    assert rules(k) == ["def-before-use"]


def test_single_definition():
    x = Value("x", INDEX)
    k = kernel(Op("block_id", (), (x,), {}, L), Op("block_id", (), (x,), {}, L))
    assert rules(k) == ["single-def"]


def test_nested_roles_and_missing_warpgroup():
    inner = Op("role", (), (), {"name": "b", "warpgroups": (1,), "regs": 40}, L, (Block(),))
    outer = Op("role", (), (), {"name": "a", "warpgroups": (0,), "regs": 40}, L,
               (Block([inner]),))
    assert sorted(rules(kernel(outer, block=128))) == ["roles", "roles"]   # nested; wg 1 missing


def test_overlapping_roles():
    a = Op("role", (), (), {"name": "a", "warpgroups": (0,), "regs": 40}, L, (Block(),))
    b = Op("role", (), (), {"name": "b", "warpgroups": (0,), "regs": 40}, L, (Block(),))
    assert rules(kernel(a, b, block=256)) == ["roles"]


def test_tag_assert_operands():
    x = Value("x", FRAG)
    alloc = Op("frag.alloc", (), (x,), {}, L)
    bad = Op("tag.assert", (x,), (), {"pred": BinExpr("==", TagField(0, "row"), CoordOf(1, 0))}, L)
    (p,) = problems(kernel(alloc, bad))
    assert p.rule == "tag-operands" and "[1]" in p.message


def test_ir_error_lists_every_problem():
    with pytest.raises(IRError) as info:
        check_kernel(kernel(Op("nope", (), (), {}, L), Op("nope2", (), (), {}, L)))
    assert len(info.value.problems) == 2 and "t.py:7:3: nope:" in str(info.value)
