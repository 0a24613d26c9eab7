"""The contracts the differential soundness fuzz (docs/soundness-report.md) showed missing,
each on a one-line edit of a shipped example that the interpreter shows wrong (or refuses):
a data input loaded but reaching no output (tag.operand-tensor), a fragment read before it
is written (tag.uninitialised), a tile that never meets its tensor (tag.off-tensor), an
entry or a segment outside what it indexes (tag.index-range), an expect_tx arming another
barrier than its loads complete (protocol.expect-tx); and the rule crashes that now say
they are verifier defects (tag.internal-error) instead of "not modelled"."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend.parse import parse_kernel, parse_source
from argus.verify import protocol, tags

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def variant(name: str, kernel: str, old: str, new: str):
    src = (EXAMPLES / f"{name}.py").read_text()
    assert src.count(old) == 1, old
    changed = src.replace(old, new)
    line = next(i + 1 for i, (a, b) in enumerate(zip(src.splitlines(), changed.splitlines()))
                if a != b)
    return parse_source(changed, str(EXAMPLES / f"{name}.py"))[kernel], line, changed


def errors(found):
    return [f for f in found if f.severity == "error"]


def test_scores_from_v_instead_of_k_name_the_unused_k_load():
    k, _, src = variant("flash_attention", "flash_fwd", "wgmma(s_acc, q_rows, k_s[s])",
                        "wgmma(s_acc, q_rows, v_s[s])")
    found = [f for f in errors(tags.check(k)) if f.check == "tag.operand-tensor"]
    assert len(found) == 1 and found[0].message.startswith("K is loaded here")
    k_load = next(i + 1 for i, l in enumerate(src.splitlines()) if "tile(K," in l)
    assert found[0].loc.line == k_load and "Q, V" in found[0].message


def test_gate_projection_from_the_up_weights():
    k, _, _ = variant("moe_gate_up", "moe_gate_up", "wgmma(gate, x_rows, g_s[s])",
                      "wgmma(gate, x_rows, u_s[s])")
    found = [f for f in errors(tags.check(k)) if f.check == "tag.operand-tensor"]
    assert found and "W1 is loaded here" in found[0].message


def test_a_dropped_accumulation_leaves_its_inputs_unused():
    k, _, _ = variant("moe_combine", "moe_combine", "assign(acc, acc + y * g)", "pass")
    found = {f.message.split(" ")[0] for f in errors(tags.check(k))
             if f.check == "tag.operand-tensor"}
    assert found & {"gates", "Yd"}


def test_the_shipped_kernels_load_nothing_they_do_not_use():
    for name, kernel in [("flash_attention", "flash_fwd"), ("moe_combine", "moe_combine"),
                         ("gemm", "gemm")]:
        assert not errors(tags.check(parse_kernel(EXAMPLES / f"{name}.py", kernel)))


@pytest.mark.parametrize("old,new,made", [
    ('total = fragment(fp32, (E,), "rows(blocked)", init=0.0)',
     'total = fragment(fp32, (E,), "rows(blocked)")', "total"),
    ("    assign(base, prefix_sum(total))\n", "    pass\n", "base"),
])
def test_a_fragment_read_before_anything_writes_it(old, new, made):
    k, _, src = variant("moe_route", "moe_route", old, new)
    found = [f for f in errors(tags.check(k)) if f.check == "tag.uninitialised"]
    assert len(found) == 1
    made_at = next(i + 1 for i, l in enumerate(src.splitlines())
                   if l.strip().startswith(f"{made} = fragment("))
    assert f"made at line {made_at}" in found[0].message
    assert "init=0.0" in found[0].hint


def test_a_tile_one_box_past_the_tensor_reads_nothing():
    k, line, _ = variant("moe_route", "moe_route", "load(tile(L, (BT, E), (tt, 0))",
                         "load(tile(L, (BT, E), (tt, 1))")
    found = [f for f in errors(tags.check(k)) if f.check == "tag.off-tensor"]
    assert [f.loc.line for f in found] == [line]


def test_an_off_tensor_query_that_cannot_be_built_is_a_visible_verifier_defect(monkeypatch):
    # the check used to return silently on a z3 or type error: now the read is reported as
    # not verified (tag.internal-error, a warning that makes the verdict unverified)
    from argus.verify.tags import offtensor

    def broken(*_a, **_k):
        raise TypeError("sort mismatch")
    k, line, _ = variant("moe_route", "moe_route", "load(tile(L, (BT, E), (tt, 0))",
                         "load(tile(L, (BT, E), (tt, 1))")
    monkeypatch.setattr(offtensor, "holds", broken)
    found = [f for f in tags.check(k) if f.check == "tag.internal-error"
             and "off-tensor check" in f.message]
    assert found and all(f.severity == "warning" for f in found)
    assert line in {f.loc.line for f in found}
    assert not [f for f in tags.check(k) if f.check == "tag.off-tensor"]


def test_counts_read_at_a_negative_box():
    k, line, _ = variant("moe", "moe_grouped", "cnt = load_indices(tile(counts, (E,), (0,)))",
                         "cnt = load_indices(tile(counts, (E,), (0 - 1,)))")
    found = [f for f in errors(tags.check(k)) if f.check == "tag.off-tensor"]
    assert [f.loc.line for f in found] == [line]


def test_an_expert_loop_one_too_long_indexes_past_the_vector():
    src = (EXAMPLES / "moe_route.py").read_text()
    at = src.index("for e in range(E):", src.index("pass 2"))
    changed = src[:at] + "for e in range(E + 1):" + src[at + len("for e in range(E):"):]
    k = parse_source(changed, str(EXAMPLES / "moe_route.py"))["moe_route"]
    found = [f for f in errors(tags.check(k)) if f.check == "tag.index-range"]
    assert found and "outside 0..7" in found[0].message
    assert "element(cast(base, int32), e)" in changed.splitlines()[found[0].loc.line - 1]


def test_a_choice_loop_one_too_long_runs_segments_past_the_tensor():
    k, _, src = variant("moe_combine", "moe_combine",
                        "for j in range(TOPK):\n        slots_j = segment(slots, j * T, T)",
                        "for j in range(TOPK + 1):\n        slots_j = segment(slots, j * T, T)")
    found = [f for f in errors(tags.check(k)) if f.check == "tag.index-range"]
    assert found and all("segment" in src.splitlines()[f.loc.line - 1] for f in found)


def test_expect_tx_on_the_next_stage_in_a_filtered_loop():
    k, line, _ = variant("moe", "moe_grouped",
                         "expect_tx(full[s], nbytes(x_s[s]) + nbytes(w_s[s]))",
                         "expect_tx(full[(s + 1) % S], nbytes(x_s[s]) + nbytes(w_s[s]))")
    found = [f for f in protocol.check(k) if f.check == "protocol.expect-tx"]
    assert [f.loc.line for f in found] == [line] and found[0].severity == "error"
    assert found[0].counterexample is not None


def test_the_shipped_kernels_arm_the_barriers_their_loads_complete():
    for name, kernel in [("moe", "moe_grouped"), ("gemm", "gemm")]:
        k = parse_kernel(EXAMPLES / f"{name}.py", kernel)
        assert not [f for f in protocol.check(k) if f.check == "protocol.expect-tx"]


def test_a_rule_that_crashes_is_a_verifier_defect_not_unmodelled(monkeypatch):
    from argus.verify.tags import rules

    def broken(w, op):
        raise TypeError("unsupported operand type(s)")
    monkeypatch.setitem(rules.RULES, "frag.convert", broken)
    k = parse_kernel(EXAMPLES / "flash_attention.py", "flash_fwd")
    if not any(op.opcode == "frag.convert" for op in k.walk()):
        pytest.skip("flash_fwd has no frag.convert")
    found = tags.check(k)
    crash = [f for f in found if f.check == "tag.internal-error"]
    assert crash and crash[0].severity == "warning" and "TypeError" in crash[0].message
    assert "defect of the verifier" in crash[0].message
    assert not [f for f in found if f.check == "tag.not-modelled" and "TypeError" in f.message]


def test_a_rule_that_cannot_express_an_op_is_not_modelled(monkeypatch):
    from argus.verify.tags import rules

    def refuses(w, op):
        raise ValueError("a layout the rule does not know")
    monkeypatch.setitem(rules.RULES, "frag.convert", refuses)
    k = parse_kernel(EXAMPLES / "flash_attention.py", "flash_fwd")
    if not any(op.opcode == "frag.convert" for op in k.walk()):
        pytest.skip("flash_fwd has no frag.convert")
    found = tags.check(k)
    assert [f for f in found if f.check == "tag.not-modelled" and "ValueError" in f.message]
    assert not [f for f in found if f.check == "tag.internal-error"]
