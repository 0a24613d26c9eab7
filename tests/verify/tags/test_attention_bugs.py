"""The attention bug corpus (examples/bugs/attention/): each bug is reported at the line its
docstring names, with a counterexample (block, warpgroup, thread and register or the
element), and the interpreter, run on the counterexample's block and sizes, gives a wrong
answer at the output element the counterexample names (value mode; the stage bug also in
fragment-exact mode)."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_kernel
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify.driver import verify

ROOT = Path(__file__).resolve().parents[3]
BUGS = ROOT / "examples" / "bugs" / "attention"
# the copies of examples/flash_attention.py (kernel flash_fwd); the copies of the library
# kernel are tests/verify/tags/test_attention_gqa.py's
NAMES = sorted(p.stem for p in BUGS.glob("*.py")
               if "A copy of examples/flash_attention.py" in p.read_text())
HD, BM = 64, 128


def expected(name: str) -> tuple[str, int]:
    doc = (BUGS / f"{name}.py").read_text()
    m = re.search(r"Expected: (\S+) at line (\d+)\.", doc)
    assert m, f"{name}.py: the docstring must say 'Expected: <check> at line <n>.'"
    return m.group(1), int(m.group(2))


@lru_cache(maxsize=None)
def analysed(name: str):
    kernel = parse_kernel(BUGS / f"{name}.py", "flash_fwd")
    return kernel, verify(kernel)


def finding(name: str):
    want, line = expected(name)
    _, findings = analysed(name)
    hits = [f for f in findings if f.check == want and f.loc.line == line]
    assert hits, f"{name}: no {want} at line {line}; got " + "; ".join(
        f"{f.check}@{f.loc.line}" for f in findings)
    return hits[0]


def test_the_corpus_has_the_ten_attention_bugs():
    assert NAMES == ["accumulator_not_rescaled", "k_wrong_block", "mask_off_by_one",
                     "p_from_unmasked_scores", "rescale_current_max", "skip_partial_block",
                     "softmax_wrong_axis", "stale_row_sum", "store_wrong_rows",
                     "v_wrong_stage"]


@pytest.mark.parametrize("name", NAMES)
def test_bug_is_reported_at_its_line_with_a_counterexample(name):
    f = finding(name)
    assert f.severity == "error"
    assert f.loc.file.endswith(f"{name}.py")
    cex = f.counterexample
    assert cex is not None and cex.sizes["T"] % BM == 0 and cex.block is not None
    assert cex.warpgroup in (1, 2)
    assert f.hint and "Traceback" not in f.message


# -- the interpreter ----------------------------------------------------------------------
def _reference():
    spec = importlib.util.spec_from_file_location("fa_example", ROOT / "examples" /
                                                  "flash_attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference


def inputs(t: int, seed: int = 0):
    """Random Q, K, V whose scores grow with the key index (so the running max of a row
    changes from block to block, which is when a wrong rescale shows) and whose values
    ramp with the key (so a weight given to the wrong key moves every output column)."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((t, HD)).astype(np.float32) for _ in range(3))
    q[:, 0] = 8.0
    k[:, 0] = np.linspace(-3.0, 3.0, t)
    v += 3.0 * np.linspace(-1.0, 1.0, t, dtype=np.float32)[:, None]
    return tuple(round_to_bf16(x) for x in (q, k, v))


def run(name: str, cex, mode: str = "value"):
    kernel, _ = analysed(name)
    t = cex.sizes["T"]
    q, k, v = inputs(t)
    out = np.full((t, HD), np.nan, np.float32)
    result = interpret(kernel, {"Q": q, "K": k, "V": v, "O": out}, seed=0,
                       blocks=list(cex.block), mode=mode)
    causal = bool(kernel.constants["CAUSAL"])
    return result, result.outputs["O"], _reference()(q, k, v, causal=causal)


TOL = 0.05      # the correct kernel is within 0.02 of the reference on these inputs


def wrong(out, ref, idx) -> bool:
    return bool(not np.isfinite(out[idx]) or abs(out[idx] - ref[idx]) > TOL)


@pytest.mark.parametrize("causal", [1, 0])
def test_the_correct_kernel_is_right_on_these_inputs(causal):
    from argus.frontend import parse_file
    kernel = parse_file(ROOT / "examples" / "flash_attention.py", {"CAUSAL": causal})["flash_fwd"]
    q, k, v = inputs(256)
    out = interpret(kernel, {"Q": q, "K": k, "V": v, "O": np.full((256, HD), np.nan,
                                                                   np.float32)}).outputs["O"]
    assert np.abs(out - _reference()(q, k, v, causal=bool(causal))).max() < 0.02


def row_named(cex) -> int:
    """The query row of the register the counterexample names (accumulator layouts)."""
    return cex.block[0] * BM + (cex.warpgroup - 1) * 64 + cex.cell[0]


@pytest.mark.parametrize("name", ["rescale_current_max", "accumulator_not_rescaled",
                                  "stale_row_sum", "mask_off_by_one", "k_wrong_block",
                                  "softmax_wrong_axis", "p_from_unmasked_scores"])
def test_interpreter_confirms_the_row_of_the_thread_named(name):
    cex = finding(name).counterexample
    assert cex.thread is not None and cex.register is not None and cex.cell is not None
    assert cex.thread == 128 * cex.warpgroup + cex.lane + 32 * (cex.warp % 4)
    _, out, ref = run(name, cex)
    idx = (row_named(cex), cex.cell[1] % HD)
    assert wrong(out, ref, idx), (idx, out[idx], ref[idx])


def test_rescale_bug_needs_a_block_where_the_max_can_grow():
    """Block 1 is fully masked for the first warpgroup of block 0 (its max cannot grow
    there), so the smallest counterexample is the first warpgroup of block 1 at j = 1, and
    block 0's first 64 rows are right."""
    cex = finding("rescale_current_max").counterexample
    assert cex.block == (1,) and cex.iteration["j"] == 1 and cex.warpgroup == 1
    q, k, v = inputs(256)
    out = np.full((256, HD), np.nan, np.float32)
    kernel, _ = analysed("rescale_current_max")
    res = interpret(kernel, {"Q": q, "K": k, "V": v, "O": out}, seed=0, blocks=[0])
    ref = _reference()(q, k, v, causal=True)
    np.testing.assert_allclose(res.outputs["O"][:64], ref[:64], rtol=2 ** -6, atol=2e-2)


def test_interpreter_confirms_the_skipped_key():
    f = finding("skip_partial_block")
    cex = f.counterexample
    (e,) = cex.elements
    q_row, col = e.index
    key = e.actual["key"]
    assert key <= q_row and e.actual["times accumulated"] == 0 and "skips block j=1" in f.message
    _, out, ref = run("skip_partial_block", cex)
    assert wrong(out, ref, (q_row, col))
    # rows whose keys all lie in the visited blocks are right
    first = cex.block[0] * BM
    np.testing.assert_allclose(out[first:first + 64], ref[first:first + 64], rtol=2 ** -6,
                               atol=2e-2)


def test_interpreter_confirms_the_stage_bug_in_both_modes():
    f = finding("v_wrong_stage")
    cex = f.counterexample
    assert cex.barrier == "kv_full[0]" and "stage 1" in f.message
    r0 = cex.block[0] * BM + (cex.warpgroup - 1) * 64
    for mode in ("value", "exact"):
        _, out, ref = run("v_wrong_stage", cex, mode)
        rows = slice(r0, r0 + 64)
        bad = ~np.isfinite(out[rows]) | (np.abs(out[rows] - ref[rows]) > TOL)
        assert bad.mean() > 0.5, mode


def test_interpreter_confirms_the_store_bug_at_the_destination():
    cex = finding("store_wrong_rows").counterexample
    (e,) = cex.elements
    dst = (e.expected["coord[0]"], e.expected["coord[1]"])
    came_from = (e.actual["tag.row"], e.actual["tag.col"])
    assert dst != came_from
    kernel, _ = analysed("store_wrong_rows")
    t = cex.sizes["T"]
    q, k, v = inputs(t)
    res = interpret(kernel, {"Q": q, "K": k, "V": v, "O": np.full((t, HD), np.nan, np.float32)},
                    seed=0, blocks=list(cex.block))     # the block whose write is wrong
    out, ref = res.outputs["O"], _reference()(q, k, v, causal=True)
    assert wrong(out, ref, dst)
    assert abs(out[dst] - ref[came_from]) <= TOL      # the row tag says where it came from


def test_counterexample_names_the_iteration_and_sizes_for_the_loop_bugs():
    for name in ("rescale_current_max", "accumulator_not_rescaled"):
        cex = finding(name).counterexample
        assert cex.iteration["j"] >= 1 and cex.sizes["T"] >= 2 * BM
