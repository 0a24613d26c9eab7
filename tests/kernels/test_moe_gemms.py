"""argus/kernels/moe_gate_up.py and moe_down.py: both grouped GEMMs verify with no finding
(in under 2 s of checking, both item orders, both gate-up gathers), and on the interpreter
they match their fp64 references (outputs poisoned with NaN first) on routings with empty
experts, one expert taking every slot, counts that are not multiples of the m-tile, a
persistent block walking several items with the ring carried over, both item orders, both
n-tile widths and both gathers of the gate-up's token rows (GATHER "tma": one TMA box a row;
"warpgroup": gather_cp_async by every producer thread); rows of a wrong routing fail the
comparison. The warpgroup gather's misuses are found by the verifier and the interpreter
alike: a consumer that does not fence the cp.async writes before its wgmma, full[s] without
the gather's 128 arrivals (examples/bugs/moe_gather), the gather filling the wrong stage or
column tile."""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from argus.ops.library import KERNEL_DIR, kernel_ir
from argus.verify import verify
from tests.kernels.moe_cases import load_scale

from tests.kernels.moe_cases import bf16, close, routing


def _load(name):
    spec = importlib.util.spec_from_file_location(f"{name}_ref", KERNEL_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GATE_UP, DOWN = _load("moe_gate_up"), _load("moe_down")
DECODE = {"WG": 1, "CONSUMERS": (1,), "BN": 128, "SKIP_EMPTY": 1}   # moe.config_for, T <= 64


@pytest.mark.parametrize("module, name, overrides", [
    ("moe_gate_up", "moe_gate_up", {}), ("moe_gate_up", "moe_gate_up", {"ORDER": "m_major"}),
    ("moe_gate_up", "moe_gate_up", {"GATHER": "warpgroup"}),
    ("moe_gate_up", "moe_gate_up", {"GATHER": "warpgroup", "ORDER": "m_major"}),
    ("moe_down", "moe_down", {}), ("moe_down", "moe_down", {"ORDER": "m_major", "BN": 256}),
    # argus.ops.moe's decode configurations: one consumer warpgroup, 128-wide weight tiles
    ("moe_gate_up", "moe_gate_up", {"GATHER": "warpgroup", **DECODE, "S": 5}),
    ("moe_down", "moe_down", {**DECODE, "S": 8})])
def test_verifies_with_no_finding_quickly(module, name, overrides):
    ir = kernel_ir(module, name, **overrides)
    budget = 2.0 * load_scale()
    best = None
    for _ in range(2):            # the better of two runs: the shared box's noise
        start = time.process_time()      # CPU seconds: its wall clock varies more
        findings = verify(ir)
        assert findings == [], [f.message for f in findings]
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    assert best < budget


def gate_up_case(rng, e, t, p, k, f, kind):
    counts = routing(rng, kind, e, p)
    return {"X": bf16(rng, (t, k)), "W1": bf16(rng, (e * f, k), k ** -0.5),
            "W3": bf16(rng, (e * f, k), k ** -0.5),
            "ids": rng.integers(0, t, p).astype(np.int32), "counts": counts.astype(np.int32),
            "H": np.full((p, f), np.nan, np.float32)}


GATE_UP_CASES = [  # E, T tokens, P slots, K, F, routing, overrides
    (8, 50, 300, 128, 128, "random", {}),
    (8, 9, 130, 64, 256, "one", {"ORDER": "m_major"}),
    (4, 30, 200, 192, 128, "spread", {"BN": 64, "S": 3, "BLOCKS": 3}),
    (16, 100, 261, 64, 128, "random", {"BLOCKS": 2}),
    (8, 3, 6, 128, 256, "random", {**DECODE, "S": 5, "BLOCKS": 4}),     # decode: 3 tokens
]


@pytest.mark.parametrize("gather", ["tma", "warpgroup"])
@pytest.mark.parametrize("e, t, p, k, f, kind, overrides", GATE_UP_CASES)
def test_gate_up_matches_fp64(e, t, p, k, f, kind, overrides, gather):
    rng = np.random.default_rng(p + f)
    args = gate_up_case(rng, e, t, p, k, f, kind)
    res = interpret(kernel_ir("moe_gate_up", "moe_gate_up", E=e, GATHER=gather, **overrides),
                    args, seed=3)
    assert res.ok, res.failures()
    ref = GATE_UP.reference(args["X"], args["W1"], args["W3"], args["ids"], args["counts"])
    assert close(res.outputs["H"], ref)


@pytest.mark.parametrize("gather", ["tma", "warpgroup"])
def test_gate_up_exact_mode_and_a_wrong_routing_fails(gather):
    rng = np.random.default_rng(9)
    args = gate_up_case(rng, 8, 40, 150, 64, 128, "random")
    res = interpret(kernel_ir("moe_gate_up", "moe_gate_up", GATHER=gather), args, seed=4,
                    mode="exact")
    assert res.ok, res.failures()
    ref = GATE_UP.reference(args["X"], args["W1"], args["W3"], args["ids"], args["counts"])
    assert close(res.outputs["H"], ref)
    shuffled = dict(args, ids=np.roll(args["ids"], 1))
    wrong = GATE_UP.reference(shuffled["X"], args["W1"], args["W3"], shuffled["ids"],
                              args["counts"])
    assert not close(res.outputs["H"], wrong)


def down_case(rng, e, p, k, n, kind):
    counts = routing(rng, kind, e, p)
    return {"X": bf16(rng, (p, k)), "W": bf16(rng, (e * n, k), k ** -0.5),
            "counts": counts.astype(np.int32),
            "wsorted": rng.random(p).astype(np.float32),
            "Y": np.full((p, n), np.nan, np.float32)}


DOWN_CASES = [  # E, P, K, N, routing, overrides
    (8, 300, 128, 128, "random", {}),
    (8, 131, 64, 256, "one", {"BN": 256, "ORDER": "m_major"}),
    (4, 260, 192, 128, "spread", {"BN": 64, "S": 3, "BLOCKS": 3}),
    (16, 77, 64, 128, "random", {"BLOCKS": 1}),
    (8, 6, 192, 256, "random", {**DECODE, "S": 8, "BLOCKS": 3}),        # decode: 6 slots
]


@pytest.mark.parametrize("e, p, k, n, kind, overrides", DOWN_CASES)
def test_down_matches_fp64(e, p, k, n, kind, overrides):
    rng = np.random.default_rng(p + n)
    args = down_case(rng, e, p, k, n, kind)
    res = interpret(kernel_ir("moe_down", "moe_down", E=e, **overrides), args, seed=5)
    assert res.ok, res.failures()
    ref = DOWN.reference(args["X"], args["W"], args["counts"], args["wsorted"])
    assert close(res.outputs["Y"], ref)
    unweighted = DOWN.reference(args["X"], args["W"], args["counts"], np.ones(p))
    assert not close(res.outputs["Y"], unweighted)     # the weight is applied


def _warpgroup_variant(old: str, new: str):
    """moe_gate_up with GATHER = "warpgroup" and one source edit."""
    from argus.frontend.parse import parse_source
    src = (KERNEL_DIR / "moe_gate_up.py").read_text().replace('GATHER = "tma"',
                                                               'GATHER = "warpgroup"')
    assert old in src
    return parse_source(src.replace(old, new), "moe_gate_up_variant.py")["moe_gate_up"]


def _line_of(kernel, opcode):
    return next(op.loc.line for op in kernel.walk() if op.opcode == opcode)


def test_a_consumer_without_the_proxy_fence_is_found_by_the_verifier_and_the_interpreter():
    kernel = _warpgroup_variant("fence_proxy_async()    #", "pass    #")
    found = [f for f in verify(kernel) if f.check == "protocol.proxy-fence"]
    assert found and found[0].loc.line == _line_of(kernel, "wgmma.mma")
    assert "fence_proxy_async()" in found[0].hint
    rng = np.random.default_rng(1)
    res = interpret(kernel, gate_up_case(rng, 8, 50, 300, 128, 128, "random"), seed=0)
    assert "missing fence.proxy.async on x_s" in " ".join(res.failures())


def test_the_gather_into_the_wrong_stage_or_column_tile_is_found():
    stage = _warpgroup_variant("gather_cp_async(x_s[s],", "gather_cp_async(x_s[(g + 1) % S],")
    checks = {f.check for f in verify(stage)}
    assert {"protocol.stage-reuse", "tag.stage"} <= checks, checks
    column = _warpgroup_variant("gather_cp_async(x_s[s], X, tokens, k,",
                                "gather_cp_async(x_s[s], X, tokens, 0,")
    assert "tag.wgmma-k" in {f.check for f in verify(column)}


def test_past_the_enumerated_experts_the_gate_up_is_unverified_never_wrongly_failed():
    """Past the experts the tag pass enumerates (routing.SHORT = query_limits.SMALL_TRIP = 128;
    until the twenty-first session 64 and 16) the prefix sum of the counts is unknown: an
    entry read from it is unknown, not free data. Read as data, every segment started at it
    gave index-range, stage, coverage and race errors no run reaches (found 2026-12-06 at
    128 experts); the kernel is "unverified", with the reason, and quickly."""
    findings = verify(kernel_ir("moe_gate_up", "moe_gate_up", E=129, GATHER="warpgroup"))
    assert findings and all(f.severity == "warning" for f in findings), \
        [(f.check, f.message[:120]) for f in findings if f.severity != "warning"]
    assert any(f.check == "tag.not-modelled" and "index vector the pass does not know"
               in f.message for f in findings)


def test_the_grouped_gemms_of_64_experts_verify():
    """The fine-grained layer's GEMMs (64 experts): the expert loops and the tag assumptions
    in them enumerated, the prefix sums of the counts one term an entry. Until the twenty-
    first session they ended "unverified" after ~4 minutes of undecided queries (the loops
    were enumerated up to 16 experts); the gate-up's check of which tensor feeds which axis
    then asked its size equalities of every routing fact (12 s a query at 40 experts)."""
    assert verify(kernel_ir("moe_gate_up", "moe_gate_up", E=64, GATHER="warpgroup")) == []


@pytest.mark.slow
@pytest.mark.parametrize("module, experts", [("moe_down", 64), ("moe_gate_up", 128),
                                             ("moe_down", 128)])
def test_the_grouped_gemms_of_64_and_128_experts_verify(module, experts):
    """The same for the down GEMM and the 128-expert layer (8-40 s a kernel here)."""
    assert verify(kernel_ir(module, module, E=experts)) == []
