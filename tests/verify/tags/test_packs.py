"""The tag pass's rules as idiom packs in a stated order (argus/verify/tags/packs.py,
rules.py): which rule sees an op first and what it falls back to, the refusal of a
refinement with nothing under it, and that every rule of the composed table is reached
through the chain the packs state."""

import pytest

from argus.verify.tags import memory, packs, rules


def test_the_order_is_core_attention_routing_then_the_selection_and_counting_sort():
    assert [p.name for p in rules.PACKS] == ["core", "attention", "routing", "ranked",
                                             "countsort"]


@pytest.mark.parametrize("opcode, chain", [
    ("math.exp2", ["ranked", "routing", "attention", "core"]),
    ("math.cmp", ["countsort", "ranked", "routing", "attention", "core"]),
    ("store", ["countsort", "ranked", "routing", "attention", "core"]),
    ("load", ["countsort", "ranked", "routing", "core"]),
    ("tile", ["routing", "core"]),
    ("frag.assign", ["countsort", "ranked", "attention", "core"]),
    ("frag.coord", ["countsort", "ranked", "routing", "attention"]),
    ("scatter.store", ["countsort", "routing"]),
    ("scan.prefix_sum", ["countsort", "routing"]),
    ("wgmma.mma", ["attention"]),
    ("tma.load", ["core"]),
])
def test_each_opcode_falls_back_pack_by_pack(opcode, chain):
    assert [pack for pack, _ in rules.COMPOSED.chain(opcode)] == chain


def test_every_elementwise_op_of_the_table_reaches_the_generic_join_last():
    for opcode in memory.ELEMENTWISE:
        assert rules.COMPOSED.chain(opcode)[-1] == ("core", "memory.elementwise"), opcode


def _recorder(name, seen):
    def rule(w, op, base=None):
        seen.append(name)
        if base is not None:
            base(w, op)
    rule.__name__ = name
    return rule


def test_a_refinement_passes_to_the_rule_of_the_packs_before_it():
    seen = []
    a = packs.IdiomPack("a", "", rules={"x": _recorder("base", seen)})
    b = packs.IdiomPack("b", "", refines={"x": _recorder("mid", seen)})
    c = packs.IdiomPack("c", "", refines={"x": _recorder("top", seen)})
    composed = packs.compose((a, b, c))
    composed.rules["x"](None, None)
    assert seen == ["top", "mid", "base"]
    assert [p for p, _ in composed.chain("x")] == ["c", "b", "a"]


def test_a_later_rule_replaces_and_a_refinement_of_nothing_is_refused():
    seen = []
    a = packs.IdiomPack("a", "", rules={"x": _recorder("old", seen)})
    b = packs.IdiomPack("b", "", rules={"x": _recorder("new", seen)})
    packs.compose((a, b)).rules["x"](None, None)
    assert seen == ["new"]
    orphan = packs.IdiomPack("c", "", refines={"y": _recorder("top", seen)})
    with pytest.raises(ValueError, match="refines y, which no pack before it handles"):
        packs.compose((a, orphan))
    both = packs.IdiomPack("d", "", rules={"x": _recorder("r", seen)},
                           refines={"x": _recorder("f", seen)})
    with pytest.raises(ValueError, match="both replaces and refines x"):
        packs.compose((a, both))
