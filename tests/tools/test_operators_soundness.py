"""The operators for issue 19's classes (tools/mutation/operators_soundness.py) make the
edits they promise, and appending them left the older operators' mutant ids in place."""

from __future__ import annotations

import ast

import pytest

from tools.mutation import generate_mutants
from tools.mutation.operators import OPERATORS
from tools.mutation.operators_soundness import SOUNDNESS_OPERATORS
from tools.mutation.targets import TARGETS


@pytest.fixture(scope="module")
def gemm():
    return generate_mutants(TARGETS["gemm"])


def _afters(mutants, operator):
    return {m.after for m in mutants if m.operator == operator}


def test_operand_tensor_swaps_tensors_and_buffers_never_barriers(gemm):
    afters = _afters(gemm, "operand_tensor")
    assert "tma_load(b_s[s], tile(A, (BN, BK), (tn, k)), full[s])" in afters   # B's stage from A
    assert "tma_load(a_s[s], tile(B, (BM, BK), (tm, k)), full[s])" in afters
    assert "wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), a_s[s])" in afters     # B operand = A
    barrier_for_buffer = [a for a in afters if "(full[s]," in a or "tile(full[s]" in a
                          or a.endswith(", full[s])") is False and a.startswith("tma_load")]
    assert not barrier_for_buffer
    flash = _afters(generate_mutants(TARGETS["flash_fwd"]), "operand_tensor")
    assert "tma_load(v_s[s], tile(K, (BN, HD), (j, 0)), kv_full[s])" in flash  # V from K
    gate_up = _afters(generate_mutants(TARGETS["moe_gate_up"]), "operand_tensor")
    assert "tma_load(g_s[s], tile(w3_e, (BN, BK), (tn, k)), full[s])" in gate_up  # gate from up
    assert "wgmma(gate, x_rows, u_s[s])" in gate_up


def test_zero_trip_and_extent_compare(gemm):
    zero = _afters(gemm, "zero_trip")
    assert {"for k in range(0):", "KT = (K % BK)", "KT = (0 // BK)"} <= zero
    assert 'for i, tm, tn in schedule(0, N // BN, order="grouped", group=8):' in zero
    assert 'for i, tm, tn in schedule((M > BM), N // BN, order="grouped", group=8):' in \
        _afters(gemm, "extent_compare")


def test_sync_in_role_inserts_a_barrier_inside_one_role(gemm):
    inserted = [m for m in gemm if m.operator == "sync_in_role"]
    assert len(inserted) == 4                     # two roles: the body's start and a loop's
    for m in inserted:
        tree = ast.parse(m.source)
        roles = [w for w in ast.walk(tree) if isinstance(w, ast.With)
                 and ast.unparse(w.items[0].context_expr).startswith("role(")]
        holders = [r for r in roles if any(isinstance(n, ast.Call) and ast.unparse(n) ==
                                           "sync_block()" for n in ast.walk(r))]
        assert len(holders) == 1, m


def test_walk_order_changes_one_schedule_or_swaps_a_loop_nest(gemm):
    orders = [m for m in gemm if m.operator == "walk_order"]
    assert "for i, tm, tn in schedule(M // BM, N // BN, order='row_major'):" in \
        {m.after for m in orders}
    assert sum(m.source.count("order='row_major'") for m in orders) == 2   # one role each
    moe = [m for m in generate_mutants(TARGETS["moe_grouped"]) if m.operator == "walk_order"]
    assert moe
    for m in moe:
        lines = [ln.strip() for ln in m.source.splitlines()]
        i = lines.index("for tn in range(NT):", m.line - 1)
        assert lines[i + 1] == "for mt in range(cdiv(rows, BM)):"


def test_acc_reset_drops_the_init(gemm):
    assert _afters(gemm, "acc_reset") == {
        "acc = fragment(fp32, (64, BN), 'wgmma_acc_m64n256')"}


def test_new_operators_come_after_the_old_ones_so_old_ids_stay_put(gemm):
    old = [name for name in OPERATORS if name not in SOUNDNESS_OPERATORS]
    assert list(OPERATORS)[:len(old)] == old
    before = generate_mutants(TARGETS["gemm"], operators=old)
    assert [(m.id, m.after) for m in before] == [(m.id, m.after) for m in gemm[:len(before)]]
    for m in gemm:
        ast.parse(m.source)
