"""The MoE bug corpus (examples/bugs/moe/): each bug is reported by the tag pass at the
line its docstring names, with a counterexample (sizes, the routing counts and ids it
needs, the element), and the CPU interpreter, run on that routing, gives a wrong answer at
the element the finding names (or, for the padded offsets, refuses the launch because the
kernel writes rows H does not have, at the row the finding names)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from tests.verify.tags.bug_corpus import Corpus

ROOT = Path(__file__).resolve().parents[3]
BUGS = ROOT / "examples" / "bugs" / "moe"
NAMES = sorted(p.stem for p in BUGS.glob("*.py"))
KERNEL = {"weight_of_next_expert": "moe_grouped", "padding_rows_stored": "moe_grouped",
          "tail_rows_unmasked": "moe_grouped", "gather_by_slot": "moe_gate_up",
          "padded_offsets_as_rows": "moe_gate_up", "combine_other_choice_gate": "moe_combine",
          "combine_choices_not_atomic": "moe_combine", "last_expert_skipped": "moe_grouped"}
E = 8


def _example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CORPUS = Corpus("moe", KERNEL)
expected, analysed, finding = CORPUS.expected, CORPUS.analysed, CORPUS.finding


def test_the_corpus_has_the_eight_moe_bugs():
    assert NAMES == sorted(KERNEL)


@pytest.mark.parametrize("name", NAMES)
def test_bug_is_reported_at_its_line_with_a_counterexample(name):
    f = finding(name)
    assert f.severity == "error"
    assert f.loc.file.endswith(f"{name}.py")
    cex = f.counterexample
    assert cex is not None and cex.sizes and cex.elements
    assert f.hint and "Traceback" not in f.message
    if KERNEL[name] != "moe_combine":        # the routing the violation needs is part of it
        assert set(cex.routing["counts"]) == set(range(E))


def _bf16(rng, *shape):
    return round_to_bf16(rng.standard_normal(shape).astype(np.float32))


def _wrong(out, ref, idx) -> bool:
    """Off by more than bf16 rounding (2^-7 of the element) could explain: the whole row of
    the element is checked too, so that a reference value near 0 cannot hide the bug."""
    row = idx[0]
    tol = 2 ** -7 * (np.abs(ref[row]) + 2 ** -7)
    bad = np.isnan(out[row]) | (np.abs(out[row] - ref[row]) > tol)
    return bool(bad[idx[1]] and bad.mean() > 0.5)


def _counts(cex):
    return np.array([cex.routing["counts"][e] for e in range(E)], np.int32)


def _grouped(name, counts, blocks, seed=0):
    """Run a grouped-GEMM bug on `counts` (Y first filled with the right answer, so a block
    that overwrites other rows shows); the output and the reference."""
    kernel, _ = analysed(name)
    rng = np.random.default_rng(seed)
    t, k, n = int(counts.sum()), 64, 128
    x, w = _bf16(rng, t, k), _bf16(rng, E * n, k)
    ref = _example("moe").reference(x, w, counts)
    result = interpret(kernel, {"X": x, "W": w, "counts": counts, "Y": ref.copy()},
                       seed=seed, blocks=blocks)
    assert result.ok, result.failures()
    return result.outputs["Y"], ref


def test_interpreter_confirms_the_weights_of_the_next_expert():
    cex = finding("weight_of_next_expert").counterexample
    acc = cex.elements[0]
    expert = cex.iteration["e"]
    assert acc.actual["a.expert"] == expert and acc.actual["b.expert"] == (expert + 1) % E
    counts = _counts(cex)
    out, ref = _grouped("weight_of_next_expert", counts, list(cex.block))
    first = int(counts[:expert].sum())                 # the expert's first row of Y
    row = first + cex.iteration["mt"] * 128 + (cex.warpgroup - 1) * 64 + cex.cell[0]
    assert _wrong(out, ref, (row, cex.iteration["tn"] * 128 + cex.cell[1]))


def test_interpreter_confirms_tail_rows_land_on_the_next_expert():
    cex = finding("tail_rows_unmasked").counterexample
    (e,) = cex.elements
    expert = cex.iteration["e"]
    assert e.actual["live"] == 0 and e.actual["expert"] == expert     # a padding row
    counts = _counts(cex)
    out, ref = _grouped("tail_rows_unmasked", counts, list(cex.block))
    assert _wrong(out, ref, tuple(e.index))
    assert out[tuple(e.index)] == 0                            # the padding row read zeros
    real = slice(int(counts[:expert].sum()), int(counts[:expert + 1].sum()))
    np.testing.assert_allclose(out[real], ref[real], rtol=2 ** -7, atol=2 ** -7)


def test_interpreter_confirms_padding_rows_overwrite_the_next_expert():
    """The counterexample's routing (an expert with fewer rows than the element's row, a
    later one holding that row) pads the later expert's segment past Y too; with the last
    expert holding a whole tile instead every padded segment lies inside Y, and the element
    the finding names is overwritten the same way."""
    cex = finding("padding_rows_stored").counterexample
    (e,) = cex.elements
    counts = _counts(cex)
    first = cex.iteration["e"]
    assert counts[:first].sum() + counts[first] <= e.index[0] and e.actual["live"] == 0
    last = int(np.nonzero(counts)[0][-1])
    assert last > first
    counts[last] = 128
    out, ref = _grouped("padding_rows_stored", counts, list(cex.block))
    assert _wrong(out, ref, tuple(e.index))
    assert out[tuple(e.index)] == 0


def test_interpreter_confirms_the_last_expert_is_never_stored():
    """The windows of the prefix sum cover Y only over the whole expert loop: one expert
    short, the row the finding names is the last expert's, and it keeps the poison the
    output was filled with while every other expert's rows are right."""
    cex = finding("last_expert_skipped").counterexample
    (e,) = cex.elements
    counts = _counts(cex)
    row = e.index[0]
    assert counts[:E - 1].sum() <= row < counts.sum()
    kernel, _ = analysed("last_expert_skipped")
    rng = np.random.default_rng(0)
    x, w = _bf16(rng, int(counts.sum()), 64), _bf16(rng, E * 128, 64)
    ref = _example("moe").reference(x, w, counts)
    y = np.full(ref.shape, np.nan, np.float32)
    result = interpret(kernel, {"X": x, "W": w, "counts": counts, "Y": y}, seed=0)
    assert result.ok, result.failures()
    out = result.outputs["Y"]
    assert np.isnan(out[row]).all()
    done = int(counts[:E - 1].sum())
    np.testing.assert_allclose(out[:done], ref[:done], rtol=2 ** -7, atol=2 ** -7)


def _gate_up(name, cex, seed=0):
    kernel, _ = analysed(name)
    rng = np.random.default_rng(seed)
    counts = _counts(cex)
    t, p, k, f = cex.sizes["T"], cex.sizes["P"], 64, 128
    ids = rng.integers(0, t, p).astype(np.int32)
    for i, v in cex.routing.get("ids", {}).items():
        if i < p:                      # the model may name entries past the array
            ids[i] = v
    x, w1, w3 = _bf16(rng, t, k), _bf16(rng, E * f, k), _bf16(rng, E * f, k)
    args = {"X": x, "W1": w1, "W3": w3, "ids": ids, "counts": counts,
            "H": np.full((p, f), np.nan, np.float32)}
    return kernel, args, _example("moe_gate_up").reference(x, w1, w3, ids, counts)


def test_interpreter_confirms_gathering_by_slot():
    cex = finding("gather_by_slot").counterexample
    (e,) = cex.elements
    slot = e.expected["coord[0]"]
    assert e.actual["tag.row"] == slot != e.expected["ids[coord($2)[0]]"]   # X[p], not X[ids[p]]
    kernel, args, ref = _gate_up("gather_by_slot", cex)
    result = interpret(kernel, args, seed=0)
    assert result.ok, result.failures()
    out = result.outputs["H"]
    assert _wrong(out, ref, (slot, e.expected["coord[1]"]))


def test_interpreter_refuses_the_padded_offsets_at_the_row_named():
    """Storing at the padded offsets sends an expert's slots past where they belong, and
    the last experts' past the end of H: the finding names a padded offset that is not
    the expert's first slot, and the interpreter refuses the first segment of H that
    starts at a padded offset past the end."""
    cex = finding("padded_offsets_as_rows").counterexample
    (e,) = cex.elements
    row, expert = e.expected["coord[0]"], cex.iteration["e"]
    counts = _counts(cex).astype(int)
    padded = np.concatenate([[0], np.cumsum(-(-counts // 128) * 128)])
    real = np.concatenate([[0], np.cumsum(counts)])
    local = (cex.iteration["mt"] * 2 + cex.warpgroup - 1) * 64 + e.index[0]  # in the segment
    assert row == padded[expert] + local and padded[expert] != real[expert], cex
    kernel, args, _ = _gate_up("padded_offsets_as_rows", cex)
    first_out = next(x for x in range(E) if padded[x] + counts[x] > counts.sum())
    with pytest.raises(Exception, match=rf"segment rows \[{padded[first_out]}, \d+\) of H"):
        result = interpret(kernel, args, seed=0)
        assert result.ok, result.failures()


def _combine(name, t, seed=0):
    kernel, _ = analysed(name)
    rng = np.random.default_rng(seed)
    module = _example("moe_combine")
    p, n = 2 * t, 64
    yd = _bf16(rng, p, n)
    routing = module.inputs(rng, {"P": p, "T": t})
    result = interpret(kernel, {"Yd": yd, **routing, "O": np.full((t, n), np.nan, np.float32)},
                       seed=seed)
    assert result.ok, result.failures()
    return result.outputs["O"], module.reference(yd, routing["slots"], routing["gates"])


def test_interpreter_confirms_the_gate_of_the_other_choice():
    cex = finding("combine_other_choice_gate").counterexample
    (e,) = cex.elements
    assert e.actual["choice of Yd"] == 1 and e.actual["choice of gates"] == 0
    out, ref = _combine("combine_other_choice_gate", cex.sizes["T"])
    bt, bn = cex.block
    assert _wrong(out, ref, (bt * 64 + e.index[0], bn * 64 + e.index[1]))


def test_interpreter_confirms_choices_stored_without_atomics_lose_one():
    cex = finding("combine_choices_not_atomic").counterexample
    (e,) = cex.elements
    out, ref = _combine("combine_choices_not_atomic", cex.sizes["T"])
    assert _wrong(out, ref, tuple(e.index))
    kinds = {f.check for f in analysed("combine_choices_not_atomic")[1]}
    assert "tag.store-race" in kinds            # and the two blocks race for the element
