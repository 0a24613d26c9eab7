"""The tensor of origin (argus/verify/tags/origin.py): a load of the wrong tensor, every
index in place, is reported at the load's line with the tensor that was meant and an
element of the output as counterexample; the interpreter confirms each bug file
(examples/bugs/origin) gives a wrong answer on a small shape, where the correct example
agrees with its reference; and `tag(x).tensor == A` in a tag_assert."""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_kernel, parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify.driver import verify
from argus.verify.tags.origin import Origin
from argus.verify.tags.values import Fragment
from argus.verify.tags.walker import Walker

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
BUGS = EXAMPLES / "bugs" / "origin"

# bug file -> (the example it copies, its kernel, the tensor the wrong load should read)
CORPUS = {
    "gemm_b_from_a": ("gemm", "gemm", "B"),
    "gemm_a_from_b": ("gemm", "gemm", "A"),
    "attention_v_from_k": ("flash_attention", "flash_fwd", "V"),
    "attention_k_from_v": ("flash_attention", "flash_fwd", "K"),
    "moe_gate_from_up": ("moe_gate_up", "moe_gate_up", "W1"),
}


def _example(name):
    """A trusted example module of the repository (for its reference and input maker)."""
    spec = importlib.util.spec_from_file_location(f"origin_example_{name}",
                                                  EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_line(name: str) -> int:
    doc = (BUGS / f"{name}.py").read_text()
    m = re.search(r"Expected: tag\.operand-tensor at line (\d+)\.", doc)
    assert m, f"{name}.py must say 'Expected: tag.operand-tensor at line <n>.'"
    return int(m.group(1))


@lru_cache(maxsize=None)
def analysed(name: str):
    _, kernel_name, _ = CORPUS[name]
    kernel = parse_kernel(BUGS / f"{name}.py", kernel_name)
    return kernel, verify(kernel)


def test_the_corpus_is_complete():
    assert sorted(p.stem for p in BUGS.glob("*.py")) == sorted(CORPUS)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_wrong_tensor_is_reported_at_the_load_with_a_counterexample(name):
    _, findings = analysed(name)
    meant = CORPUS[name][2]
    line = expected_line(name)
    hits = [f for f in findings if f.check == "tag.operand-tensor"]
    assert [f.loc.line for f in hits] == [line], [(f.check, f.loc.line) for f in findings]
    f = hits[0]
    assert f.severity == "error"
    assert f"where {meant} is meant" in f.message and f"tile({meant}" in f.hint
    text = (BUGS / f"{name}.py").read_text().splitlines()[line - 1]
    assert "tma_load" in text
    cex = f.counterexample
    assert cex is not None and cex.elements, "a concrete element of the output"
    (el,) = cex.elements
    assert el.expected == {"computed from": meant}
    assert el.actual["computed from"].endswith(f"(line {line})")
    assert cex.sizes and cex.thread is not None


# -- the interpreter: each bug gives a wrong answer, the example the right one ------------

def _bf16(rng, *shape, scale=1.0):
    return round_to_bf16((rng.standard_normal(shape) * scale).astype(np.float32))


def _run_gemm(kernel):
    rng = np.random.default_rng(0)
    m = n = 256                                     # square: every index stays in range
    k = 128
    a, b = _bf16(rng, m, k), _bf16(rng, n, k)
    res = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)},
                    seed=0, blocks=[0])
    assert res.ok, res.failures()
    ref = _example("gemm").reference(a, b)
    return res.outputs["C"][:128, :256], ref[:128, :256]     # block 0's tile


def _run_attention(kernel):
    rng = np.random.default_rng(1)
    t, hd = 256, 64
    q, k, v = (_bf16(rng, t, hd) for _ in range(3))
    res = interpret(kernel, {"Q": q, "K": k, "V": v, "O": np.full((t, hd), np.nan,
                                                                 np.float32)},
                    seed=0, blocks=[1])
    assert res.ok, res.failures()
    ref = _example("flash_attention").reference(q, k, v, causal=True)
    return res.outputs["O"][128:256], ref[128:256]              # block 1's rows


def _run_gate_up(kernel):
    module = _example("moe_gate_up")
    rng = np.random.default_rng(2)
    t, k, f, p = 64, 64, 128, 96
    routing = module.inputs(rng, {"P": p, "T": t})
    x = _bf16(rng, t, k)
    w1, w3 = _bf16(rng, module.E * f, k, scale=0.125), _bf16(rng, module.E * f, k, scale=0.125)
    res = interpret(kernel, {"X": x, "W1": w1, "W3": w3, **routing,
                             "H": np.full((p, f), np.nan, np.float32)}, seed=0)
    assert res.ok, res.failures()
    return res.outputs["H"], module.reference(x, w1, w3, routing["ids"], routing["counts"])


RUN = {"gemm": _run_gemm, "flash_attention": _run_attention, "moe_gate_up": _run_gate_up}


def _wrong_fraction(out, ref) -> float:
    tol = 2 ** -6 * (np.abs(ref) + np.abs(ref).max())
    return float(np.mean(~(np.abs(out - ref) <= tol)))       # NaN counts as wrong


@pytest.mark.parametrize("example", sorted(RUN))
def test_the_correct_example_is_right_on_these_inputs(example):
    kernel_name = next(k for e, k, _ in CORPUS.values() if e == example)
    out, ref = RUN[example](parse_kernel(EXAMPLES / f"{example}.py", kernel_name))
    assert _wrong_fraction(out, ref) == 0.0


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_interpreter_confirms_most_of_the_output_is_wrong(name):
    kernel, _ = analysed(name)
    out, ref = RUN[CORPUS[name][0]](kernel)
    assert _wrong_fraction(out, ref) > 0.5


@pytest.mark.parametrize("example,kernel_name", [("gemm", "gemm"),
                                                 ("flash_attention", "flash_fwd"),
                                                 ("moe_gate_up", "moe_gate_up")])
def test_the_examples_meet_the_contract(example, kernel_name):
    findings = verify(parse_kernel(EXAMPLES / f"{example}.py", kernel_name))
    assert [f for f in findings if f.severity == "error"] == []


# -- the origin itself ------------------------------------------------------------------------

def test_the_accumulator_is_the_product_of_a_and_b_rows_from_a_columns_from_b():
    kernel = parse_kernel(EXAMPLES / "gemm.py", "gemm")
    w = Walker(kernel)
    w.run()
    accs = [v for v in w.env.values() if isinstance(v, Fragment)
            and isinstance(v.origin, Origin) and v.layout == "wgmma_acc_m64n256"]
    assert accs            # the accumulator and what is cast from it, per warpgroup
    for acc in accs:
        o = acc.origin
        assert o.tensors == {"A", "B"}
        assert (o.rows.read.tensor, o.rows.axis) == ("A", 0)
        assert (o.cols.read.tensor, o.cols.axis) == ("B", 0)


def test_an_mn_major_b_gives_columns_along_its_axis_1():
    from argus.ops.library import kernel_ir
    w = Walker(kernel_ir("gemm", "gemm_nn"))
    w.run()
    origins = [v.origin for v in w.env.values() if isinstance(v, Fragment)
               and isinstance(v.origin, Origin) and v.origin.cols is not None
               and v.origin.cols.read.tensor == "B"]
    assert origins and all(o.cols.axis == 1 for o in origins)


# -- tag(x).tensor ---------------------------------------------------------------------------

GEMM = (EXAMPLES / "gemm.py").read_text()
WGMMA = "                wgmma_fence()\n                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])"
ASSERTED = GEMM.replace(WGMMA, "                tag_assert(tag(a_s[s]).tensor == A and "
                        "tag(b_s[s]).tensor == B)\n" + WGMMA)
B_LOAD = "tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])"


def _findings(src):
    return verify(parse_source(src, "gemm.py")["gemm"])


def test_tag_tensor_assert_is_proved_on_the_example():
    assert ASSERTED != GEMM
    assert _findings(ASSERTED) == []


def test_tag_tensor_assert_fails_naming_the_tensors():
    findings = _findings(ASSERTED.replace(B_LOAD, B_LOAD.replace("tile(B", "tile(A")))
    (f,) = [f for f in findings if f.check == "tag.assert"]
    assert "tag.tensor #2 = A" in f.message and "tensor B = B" in f.message
    line = ASSERTED.splitlines().index(next(l for l in ASSERTED.splitlines()
                                            if "tag(a_s[s]).tensor" in l)) + 1
    assert f.loc.line == line


def test_tag_tensor_of_a_product_is_not_claimed():
    src = GEMM.replace("            tag_assert(tag(out).row",
                       "            tag_assert(tag(out).tensor == C)\n            tag_assert(tag(out).row")
    (f,) = [f for f in _findings(src) if f.check == "tag.assert-undischarged"]
    assert "computed from A, B" in f.message


def test_a_tensor_compared_with_anything_but_tag_tensor_is_refused_or_fails():
    src = GEMM.replace("            tag_assert(tag(out).row",
                       "            tag_assert(tag(b_s[0]).tensor != B)\n            tag_assert(tag(out).row")
    assert any(f.check == "tag.assert" for f in _findings(src))


# -- through a staged epilogue (registers -> shared memory -> TMA store) -----------------------

@pytest.mark.parametrize("epilogue", ["smem_tma", "tma_chunks"])
def test_wrong_tensor_is_caught_through_a_tma_store_epilogue(epilogue):
    from argus.ops.library import KERNEL_DIR
    src = (KERNEL_DIR / "gemm.py").read_text()
    load = "tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])"
    assert load in src
    options = {"EPILOGUE": epilogue, "BN": 128, "ACC": "wgmma_acc_m64n128", "S": 4}
    clean = parse_source(src, "gemm.py", options)["gemm_nt"]
    assert verify(clean) == []
    bad = parse_source(src.replace(load, load.replace("tile(B", "tile(A")), "gemm.py",
                       options)["gemm_nt"]
    line = src.splitlines().index(next(l for l in src.splitlines() if load in l)) + 1
    hits = [f for f in verify(bad) if f.check == "tag.operand-tensor"]
    assert [f.loc.line for f in hits] == [line] and "where B is meant" in hits[0].message
    assert hits[0].counterexample.elements[0].tensor == "C"


@pytest.mark.parametrize("name,old", [
    ("gemm_nn", "tma_load(b_s[s], tile(B, (BK, BN), (k, tn)), full[s])"),
    ("gemm_nt", "tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])"),
    ("gemm_nn", "tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])")])
def test_library_gemm_operand_from_the_other_tensor(name, old):
    """A K x N B (gemm_nn, MN-major) loaded from A, and the other loads swapped: the
    columns (rows) of the product run along an axis that is not C's."""
    from argus.ops.library import KERNEL_DIR
    src = (KERNEL_DIR / "gemm.py").read_text()
    assert old in src
    other = "A" if "tile(B" in old else "B"
    bad = src.replace(old, old.replace("tile(B", "tile(?").replace("tile(A", "tile(B")
                      .replace("tile(?", "tile(A"))
    line = src.splitlines().index(next(l for l in src.splitlines() if old in l)) + 1
    hits = [f for f in verify(parse_source(bad, "gemm.py")[name])
            if f.check == "tag.operand-tensor"]
    meant = "B" if other == "A" else "A"
    assert [f.loc.line for f in hits] == [line] and f"where {meant} is meant" in hits[0].message
