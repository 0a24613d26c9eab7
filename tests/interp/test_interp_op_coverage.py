"""Every opcode of the op table has an interpreter rule or is listed as known missing."""

from argus.interp.ops import KNOWN_MISSING, RULES
from argus.ir.ops import OPS


def test_every_opcode_has_a_rule_or_is_listed_missing():
    missing = sorted(set(OPS) - set(RULES))
    print("opcodes without an interpreter rule (known):", sorted(KNOWN_MISSING))
    unlisted = sorted(set(missing) - KNOWN_MISSING)
    assert not unlisted, (f"opcodes with no interpreter rule and not in KNOWN_MISSING: "
                          f"{unlisted}; add a rule in argus/interp/ops/<family>.py")


def test_known_missing_list_is_current():
    stale = sorted(KNOWN_MISSING & set(RULES))
    unknown = sorted(KNOWN_MISSING - set(OPS))
    assert not stale, f"{stale} have rules now; drop them from KNOWN_MISSING"
    assert not unknown, f"{unknown} are not opcodes of the op table; drop them"


def test_rules_name_only_real_opcodes():
    extra = sorted(set(RULES) - set(OPS))
    assert not extra, f"rules for opcodes the op table does not have: {extra}"


def test_exact_overrides_name_only_real_opcodes_with_a_value_rule():
    from argus.interp.exact.rules import EXACT_RULES
    extra = sorted(set(EXACT_RULES) - set(OPS))
    assert not extra, f"exact-mode rules for opcodes the op table does not have: {extra}"
    assert set(EXACT_RULES) <= set(RULES), "every exact override needs a value-mode rule"
    # the ops that touch registers are all overridden
    for opcode in ("frag.alloc", "frag.assign", "load", "math.add", "reduce.row",
                   "frag.convert", "frag.coord", "wgmma.mma", "ldmatrix", "stmatrix"):
        assert opcode in EXACT_RULES, opcode
