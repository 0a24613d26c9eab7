"""The op table is the one source every stage reads: walking it finds, for every opcode, a
lowering (argus.codegen), an interpreter rule, a tag transfer (argus.verify.tags) and
declared effects; the effects are consistent with the operands they name."""

import pytest

from argus.codegen.lower import RULES as LOWERING
from argus.interp.ops import RULES as INTERPRETER
from argus.ir import OPS
from argus.verify.tags import rules as tag_rules
from argus.verify.tags.walker import Walker

MEMORY_KINDS = {"SmemTileType", "GlobalTileType", "GlobalTensorType"}


def _tag_transfer(opcode: str) -> bool:
    return (opcode in tag_rules.RULES or opcode in tag_rules.NO_TAGGED_DATA
            or opcode in tag_rules.NOT_MODELLED
            or hasattr(Walker, "op_" + opcode.replace(".", "_"))
            or opcode.startswith("arith."))


@pytest.mark.parametrize("opcode", sorted(OPS))
def test_every_opcode_has_every_stage(opcode):
    assert opcode in LOWERING, f"{opcode}: no CUDA lowering"
    assert opcode in INTERPRETER, f"{opcode}: no interpreter rule"
    assert _tag_transfer(opcode), f"{opcode}: no tag transfer (nor a declared reason)"


@pytest.mark.parametrize("opcode", sorted(OPS))
def test_effects_name_real_operands_and_cover_memory(opcode):
    spec = OPS[opcode]
    names = {o.name for o in spec.operands}
    assert set(spec.reads) <= names and set(spec.writes) <= names
    memory = [o.name for o in spec.operands if set(o.kinds) & MEMORY_KINDS]
    if not spec.view:
        undeclared = [m for m in memory if m not in spec.reads + spec.writes]
        assert not undeclared, f"{opcode}: memory operands {undeclared} neither read nor written"
    assert spec.proxy in ("generic", "async")
    if spec.asynchronous:
        assert spec.completes, f"{opcode}: asynchronous, but nothing says what completes it"
        if spec.completes.startswith("mbarrier:"):
            assert spec.completes.split(":", 1)[1] in names
        else:
            assert spec.completes in OPS
    else:
        assert not spec.completes


def test_not_modelled_ops_say_why():
    for opcode, why in tag_rules.NOT_MODELLED.items():
        assert opcode in OPS and len(why) > 20
