"""The router's bug corpus (examples/bugs/moe_route/): each bug is an error at the line its
docstring names, with a counterexample, and the CPU interpreter, run on what the
counterexample names (the data row of logits, or the key array and its counts), writes
a wrong value at the element the finding names (argus/kernels/moe_route.py's reference()
says what is right)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from tests.verify.tags.bug_corpus import Corpus

ROOT = Path(__file__).resolve().parents[3]
BUGS = ROOT / "examples" / "bugs" / "moe_route"
KERNEL = {"topk_smallest": "moe_topk", "topk_ties_high": "moe_topk",
          "gates_not_renormalised": "moe_topk", "place_last_choice_skipped": "moe_place",
          "place_rank_counts_itself": "moe_place"}
NAMES = sorted(p.stem for p in BUGS.glob("*.py"))


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"bug_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROUTE = _module(ROOT / "argus" / "kernels" / "moe_route.py")


CORPUS = Corpus("moe_route", KERNEL)
expected, analysed, finding = CORPUS.expected, CORPUS.analysed, CORPUS.finding


def test_the_corpus_has_the_router_bugs():
    assert NAMES == sorted(KERNEL)


@pytest.mark.parametrize("name", NAMES)
def test_bug_is_an_error_at_its_line_with_a_counterexample(name):
    f = finding(name)
    assert f.severity == "error"
    cex = f.counterexample
    assert cex is not None and cex.sizes and cex.elements
    assert f.hint and "Traceback" not in f.message


def _topk(name, cex, seed=0):
    """The bug's moe_topk on T tokens whose logits are random but for the counterexample's
    row; its experts and gates, and the reference's."""
    kernel, _ = analysed(name)
    t, e = cex.sizes["T"], ROUTE.E
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((t, e)).astype(np.float32)
    for i, v in cex.inputs["L"].items():
        logits[i // e, i % e] = v
    p = ROUTE.TOPK * t
    result = interpret(kernel, {"L": logits, "experts": np.full(p, -7, np.int32),
                                "gates": np.full(p, np.nan, np.float32)}, seed=seed)
    assert result.ok, result.failures()
    _, experts, gates, *_ = ROUTE.reference(logits, ROUTE.TOPK, bool(ROUTE.RENORM))
    return result.outputs, {"experts": experts, "gates": gates}


@pytest.mark.parametrize("name", [n for n in NAMES if KERNEL[n] == "moe_topk"])
def test_interpreter_confirms_the_selection_bug_on_the_counterexample_row(name):
    cex = finding(name).counterexample
    (e,) = cex.elements
    out, ref = _topk(name, cex)
    i = e.index[0]
    assert not np.isclose(out[e.tensor][i], ref[e.tensor][i], rtol=1e-4), \
        (e.tensor, i, out[e.tensor][i], ref[e.tensor][i])


def _placement(experts, gates):
    """ids, slots, wsorted of a counting sort of the entries by key, then entry."""
    t = len(experts) // ROUTE.TOPK
    order = sorted(range(len(experts)), key=lambda q: (experts[q], q))
    ids, slots, wsorted = (np.empty(len(experts), d) for d in (np.int64, np.int64, np.float64))
    for s, q in enumerate(order):
        ids[s], slots[q], wsorted[s] = q % t, s, gates[q]
    return {"ids": ids, "slots": slots, "wsorted": wsorted}


@pytest.mark.parametrize("name", [n for n in NAMES if KERNEL[n] == "moe_place"])
def test_interpreter_confirms_the_placement_bug_on_the_counterexample_routing(name):
    kernel, findings = analysed(name)
    for f in (x for x in findings if x.check == "tag.placement"):
        cex = f.counterexample
        (e,) = cex.elements
        p = cex.sizes["P"]
        experts = np.array([cex.routing["experts"][q] for q in range(p)], np.int32)
        counts = np.array([cex.routing["counts"][x] for x in sorted(cex.routing["counts"])],
                          np.int32)
        gates = np.random.default_rng(0).random(p).astype(np.float32)
        result = interpret(kernel, {"experts": experts, "gates": gates, "counts": counts,
                                    "ids": np.full(p, -7, np.int32),
                                    "slots": np.full(p, -7, np.int32),
                                    "wsorted": np.full(p, np.nan, np.float32)}, seed=0)
        assert result.ok, result.failures()
        ref = _placement(experts, gates)
        q = e.index[0]
        want = e.expected[f"slot of entry {q}"]
        assert e.tensor == "slots"          # the per-entry scatter names the wrong slot
        assert result.outputs["slots"][q] != ref["slots"][q] and ref["slots"][q] == want
