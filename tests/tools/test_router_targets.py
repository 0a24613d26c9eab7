"""The library router's fuzz targets (tools/mutation/targets.py: moe_topk_lib,
moe_count_lib, moe_place_lib, moe_place_here_lib; inputs from tools/mutation/problems.py):
each unmutated kernel verifies and computes the reference on every shape, its inputs are
what a router produces (each token's TOPK distinct experts, j-major, positive gates; an
empty expert and one every token chose), and every output it writes is poisoned and
compared (a kernel that leaves one unwritten is wrong)."""

from __future__ import annotations

import numpy as np
import pytest

from tools.mutation.differential import VERIFIED_CORRECT, check_then_run
from tools.mutation.runner import problem, run_once
from tools.mutation.targets import TARGETS

ROUTER = ("moe_topk_lib", "moe_count_lib", "moe_place_lib", "moe_place_here_lib")
WRITES = {"moe_topk_lib": {"experts", "gates"}, "moe_count_lib": {"counts"},
          "moe_place_lib": {"ids", "slots", "wsorted"},
          "moe_place_here_lib": {"counts", "ids", "slots", "wsorted"}}


@pytest.mark.parametrize("name", ROUTER)
def test_the_unmutated_router_kernel_verifies_and_runs_correctly(name):
    target = TARGETS[name]
    result = check_then_run(target, target.source())
    assert result.cls == VERIFIED_CORRECT and result.verdict == "verified", result.errors
    assert [r.shapes for r in result.runs] == \
        list(target.all_shapes) + [{**target.all_shapes[0], "blocks": "reversed"}]
    assert all(r.outcome == "correct" for r in result.runs)


@pytest.mark.parametrize("name", ROUTER)
def test_the_inputs_are_a_routers_and_every_written_output_is_poisoned(name):
    target = TARGETS[name]
    k, e = target.overrides["TOPK"], target.overrides["E"]
    for shapes in target.all_shapes:
        prob = problem(target, 0, shapes)
        assert {n for n, _ in prob.outputs} == WRITES[name]
        for out, dtype in prob.outputs:
            poison = prob.arrays[out]
            assert (np.isnan(poison) if dtype == "fp32" else poison == -7).all(), out
        if name == "moe_topk_lib":
            continue
        x = prob.arrays["experts"].reshape(k, shapes["T"])          # j-major
        assert x.dtype == np.int32 and ((0 <= x) & (x < e)).all()
        assert all(len(set(x[:, t])) == k for t in range(shapes["T"]))
        if "gates" in prob.arrays:
            assert (prob.arrays["gates"] > 0).all()
    first = problem(target, 0, target.shapes)
    if name != "moe_topk_lib":             # an empty expert and one every token chose
        counts = np.bincount(first.arrays["experts"], minlength=e)
        assert counts[1] == 0 and counts[e - 1] == target.shapes["T"]


def test_an_unwritten_count_fails_the_comparison():
    """COUNT_HERE's counts are compared: the placement without its store of counts[e]."""
    from argus.frontend import parse_source

    target = TARGETS["moe_place_here_lib"]
    src = target.source().replace(
        "        store(tile(counts, (1,), (e,)), cast(seen, int32))    # the entries it placed",
        "        pass")
    assert src != target.source()
    kernel = parse_source(src, target.path, target.overrides)[target.kernel]
    r = run_once(target, kernel, "value", 0, target.shapes, 20)
    assert r.outcome == "wrong" and "counts" in r.detail
