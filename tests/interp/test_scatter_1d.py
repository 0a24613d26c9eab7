"""scatter() into a 1-D tensor: element i of a 1-D fragment goes to dst[rows[i]] (what a
router needs to write the token of each sorted slot); indices outside dst are dropped."""

from __future__ import annotations

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret

SCATTER_1D = '''from argus.lang import *

@kernel(grid=(1,), block=128)
def k(I: Tensor[64, int32], V: Tensor[64, fp32], Y: Tensor["R", fp32]):
    rows = load_indices(tile(I, (64,), (0,)))
    v = load(tile(V, (64,), (0,)), "rows(blocked)")
    scatter(Y, rows, 0, v * 2.0)
'''


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_scatter_into_a_1d_tensor(mode):
    rng = np.random.default_rng(9)
    idx = rng.permutation(100)[:64].astype(np.int32)
    idx[:3] = [-1, 100, 250]                      # outside Y: dropped
    v = rng.standard_normal(64).astype(np.float32)
    y = np.full(100, np.nan, np.float32)
    k = parse_source(SCATTER_1D, "scatter_kernel.py")["k"]
    out = interpret(k, {"I": idx, "V": v, "Y": y}, mode=mode)
    assert out.ok, out.failures()
    got = out.outputs["Y"]
    want = np.full(100, np.nan, np.float32)
    want[idx[3:]] = 2 * v[3:]
    np.testing.assert_array_equal(got, want)     # NaN where nothing was scattered
