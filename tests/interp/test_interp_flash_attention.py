"""Flash attention on the interpreter against its NumPy reference: causal and not, head
dims 64 and 128, in value mode and in fragment-exact mode. The example's constants are
folded into the IR, so the variants are made by editing their defaults in the source
text before parsing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16

PATH = Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py"


def _variant(hd: int, causal: int):
    """The example with HD and CAUSAL edited: nothing else needs to change for d = 128
    (the scale and the output accumulator's layout follow HD)."""
    src = PATH.read_text()
    for old, new in [("HD = 64 ", f"HD = {hd} "),
                     ("CAUSAL: const = 1", f"CAUSAL: const = {causal}")]:
        assert old in src, f"example changed: {old!r} not found; update this test"
        src = src.replace(old, new)
    return parse_source(src, str(PATH))["flash_fwd"]


def _reference():
    spec = importlib.util.spec_from_file_location("example_flash_attention", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference


CASES = [(hd, causal, seed, "value") for hd in (64, 128) for causal in (1, 0)
         for seed in (0, 3)]
CASES += [(hd, causal, 1, "exact") for hd in (64, 128) for causal in (1, 0)]


def test_scale_follows_the_head_dim():
    for hd in (64, 128):
        scales = [o for op in _variant(hd, 1).walk() if op.opcode == "math.mul"
                  for o in op.operands if isinstance(o, float)]
        assert scales == [pytest.approx(1.4426950408889634 / np.sqrt(hd))]


@pytest.mark.parametrize("hd,causal,seed,mode", CASES)
def test_flash_attention_matches_reference(hd, causal, seed, mode):
    kernel = _variant(hd, causal)
    rng = np.random.default_rng(3000 + seed)
    t = 256
    q, k, v = (round_to_bf16(rng.standard_normal((t, hd)).astype(np.float32)) for _ in range(3))
    o = np.full((t, hd), np.nan, np.float32)
    result = interpret(kernel, {"Q": q, "K": k, "V": v, "O": o}, seed=seed, mode=mode)
    assert result.ok, result.failures()
    out = result.outputs["O"]
    assert not np.isnan(out).any()
    ref = _reference()(q, k, v, causal=bool(causal))
    # P is rounded to bf16 before the second wgmma and O to bf16 at the end
    np.testing.assert_allclose(out, ref, rtol=2 ** -6, atol=2e-2)
    other = _reference()(q, k, v, causal=not causal)
    assert not np.allclose(out, other, rtol=2 ** -6, atol=2e-2)
