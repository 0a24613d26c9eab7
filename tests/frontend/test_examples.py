"""Every example parses into well-formed IR and has a NumPy reference."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from argus.frontend import parse_file
from argus.ir import check_kernel

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


def _module(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_parses_and_has_reference(path):
    kernels = parse_file(path)
    assert kernels, f"{path.name} defines no kernel"
    for k in kernels.values():
        check_kernel(k)
    assert callable(_module(path).reference)


def test_gemm_structure():
    (k,) = parse_file(EXAMPLES[[p.stem for p in EXAMPLES].index("gemm")]).values()
    assert [(r.name, r.warpgroups, r.regs) for r in k.launch.roles] == [
        ("producer", (0,), 40), ("consumer", (1, 2), 232)]
    assert k.launch.schedules[0].order == "grouped"
    opcodes = [op.opcode for op in k.walk()]
    for needed in ("tma.load", "mbarrier.expect_tx", "mbarrier.wait", "wgmma.mma",
                   "wgmma.commit", "wgmma.wait", "mbarrier.arrive", "tag.assert", "store"):
        assert needed in opcodes, needed


def test_references_on_small_inputs():
    rng = np.random.default_rng(0)
    mods = {p.stem: _module(p) for p in EXAMPLES}
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    c = mods["gemm"].reference(a, b)
    assert c.shape == (4, 5) and np.isclose(c[2, 3], sum(a[2, i] * b[3, i] for i in range(3)))
    q, k, v = (rng.standard_normal((6, 4)) for _ in range(3))
    o = mods["flash_attention"].reference(q, k, v, causal=True)
    assert np.allclose(o[0], v[0])          # the first query sees only the first key
    full = mods["flash_attention"].reference(q, k, v, causal=False)
    assert np.allclose(o[-1], full[-1])     # the last query sees every key either way
