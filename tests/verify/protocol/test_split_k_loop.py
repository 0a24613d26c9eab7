"""Issue 19, item 6 (a): examples/gemm.py with its k loop split into two nested loops
(`for ko in range(KT // 2): for ki in range(2): k = ko * 2 + ki`) verifies clean (the ring
step of the nested loops is the user's g = i * KT + k: terms.py ties the product atoms
i * KT and i * (KT // 2)) and gives the right answer on the interpreter; a split that
forgets the inner counter in g is still a protocol error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import z3

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify import protocol
from argus.verify.driver import verify
from argus.verify.protocol import smt
from argus.verify.protocol.terms import Terms

ROOT = Path(__file__).resolve().parents[3]
GEMM = (ROOT / "examples" / "gemm.py").read_text()


def split(src: str, g: str = "i * KT + k") -> str:
    """The k loops of both roles as ko x ki (KT even, so K a multiple of 2 * BK)."""
    out = src.replace("assume(K % BK == 0)", "assume(K % (2 * BK) == 0)")
    # the producer's loop sits one level deeper (inside its elect_one) than the consumers'
    for role, pad in (("empty", " " * 16), ("full", " " * 12)):
        old = (f"{pad}for k in range(KT):\n{pad}    g = i * KT + k\n"
               f"{pad}    s = g % S\n{pad}    wait({role}[s]")
        assert old in out, role
        out = out.replace(old, f"{pad}for ko in range(KT // 2):\n"
                               f"{pad}  for ki in range(2):\n"
                               f"{pad}    k = ko * 2 + ki\n"
                               f"{pad}    g = {g}\n"
                               f"{pad}    s = g % S\n{pad}    wait({role}[s]")
    return out


def kernel(src):
    return parse_source(src, "gemm_split.py")["gemm"]


def test_the_split_k_loop_verifies_clean():
    assert verify(kernel(split(GEMM))) == []


def test_the_split_k_loop_gives_the_right_answer():
    rng = np.random.default_rng(0)
    m, n, k = 128, 256, 256                           # KT = 4: two trips of the outer loop
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    res = interpret(kernel(split(GEMM)), {"A": a, "B": b, "C": np.full((m, n), np.nan,
                                                                       np.float32)}, seed=0)
    assert res.ok, res.failures()
    ref = a @ b.T
    assert np.all(np.abs(res.outputs["C"] - ref) <= 2 ** -7 * (np.abs(ref) + np.abs(ref).max()))


def test_a_split_whose_step_forgets_the_inner_counter_is_still_an_error():
    bad = kernel(split(GEMM, g="i * KT + ko * 2"))
    assert any(f.check.startswith("protocol.") and f.severity == "error"
               for f in protocol.check(bad))


def test_atoms_of_x_and_x_div_c_are_tied_only_when_c_divides_x():
    t = Terms()
    i, K = t.fresh("i"), t.fresh("K", 1, 1 << 20)
    whole = t.mul(i, z3.UDiv(K, 64))
    half = t.mul(i, z3.UDiv(z3.UDiv(K, 64), 2))
    s = z3.Solver()
    s.add(*t.constraints, z3.URem(z3.UDiv(K, 64), 2) == 0, whole != half * 2)
    assert s.check() == z3.unsat
    s = z3.Solver()           # an odd trip count: no claim (the identity would be false)
    s.add(*t.constraints, z3.URem(z3.UDiv(K, 64), 2) == 1, whole != half * 2)
    assert s.check() == z3.sat
    assert smt.WIDTH == 32
