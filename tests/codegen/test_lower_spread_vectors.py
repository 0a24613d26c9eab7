"""Vectors spread over the warpgroup's threads (argus/codegen/lower/exchange.py, indexed.py):
row reductions of a `blocked` tile by in-thread folds and a butterfly (the grouped plan),
the prefix sum of a spread int32 vector as a block scan, `element` of a spread vector from
its holder, and a scatter whose indices are a spread vector of the values' own layout.

The plans are checked against the layout tables by emulating them in NumPy on random data;
the generated code is checked for the route it takes (the per-thread O(n) shared-memory
loops are gone) and for clear errors where a spread vector is used where it cannot be."""

import numpy as np
import pytest

from argus.codegen import generate
from argus.codegen.errors import CodegenError
from argus.codegen.lower.exchange import _contiguous_runs, _grouped_plan
from argus.codegen.registers import register_layout
from argus.frontend.parse import parse_source

HEADER = "from argus.lang import *  # noqa: F401,F403\n\n"


def _kernel(body: str, sig: str, name: str = "k"):
    src = HEADER + f"@kernel(grid=(1,), block=128)\ndef {name}({sig}):\n" + body
    return parse_source(src, "<spread>")[name]


def _emulate_grouped(layout, plan, data, fold):
    """What every thread holds after the grouped plan's folds and butterflies: [T, G]."""
    groups, bits = plan
    t = layout.table
    vals = data[t.rows, t.cols]                                  # [T, V]
    part = fold.reduce(vals[:, groups], axis=2)                  # [T, G]
    lanes = np.arange(t.threads)
    for b in bits:
        part = fold(part, part[lanes ^ (1 << b)])
    return part


@pytest.mark.parametrize("shape", [(32, 128), (32, 8), (32, 64), (64, 64), (16, 256)])
@pytest.mark.parametrize("fold", [np.maximum, np.add])
def test_the_grouped_plan_completes_every_row_in_every_holder(shape, fold):
    layout = register_layout("blocked", shape)
    plan = _grouped_plan(layout)
    assert plan is not None, shape
    data = np.random.default_rng(0).integers(-50, 50, shape).astype(np.float64)
    part = _emulate_grouped(layout, plan, data, fold)
    want = fold.reduce(data, axis=1)
    groups, _ = plan
    rows = layout.table.rows[:, groups[:, 0]]                    # [T, G]: the row of each part
    assert np.array_equal(part, want[rows])


def test_the_grouped_plan_refuses_layouts_it_cannot_complete():
    # a 1-D vector has no rows to fold; a small blocked tile leaves threads empty
    assert _grouped_plan(register_layout("rows(blocked)", (32,))) is None
    assert _grouped_plan(register_layout("blocked", (4, 8))) is None


def test_a_blocked_row_max_folds_in_registers_and_shuffles():
    k = _kernel("    x = load(tile(X, (32, 128), (0, 0)), \"blocked\")\n"
                "    store(tile(Y, (32,), (0,)), row_max(x))\n",
                "X: Tensor[32, 128, fp32], Y: Tensor[32, fp32]")
    cuda = generate(k).source
    assert "row max: 4 rows a thread of 8 registers, lanes xor [1, 2, 4, 8]" in cuda
    assert "argus::shfl_xor(argus_r, 8)" in cuda
    assert "for (int argus_i = 1; argus_i < 128; ++argus_i)" not in cuda   # the old route


def test_contiguous_runs_of_a_spread_vector():
    assert _contiguous_runs(register_layout("blocked", (1024,))) == 8
    assert _contiguous_runs(register_layout("blocked", (128,))) == 1
    assert _contiguous_runs(register_layout("rows(blocked)", (32,))) == 0


def _emulate_block_scan(values):
    """The block scan's arithmetic (runs, a shuffle scan per warp, warp totals) in NumPy."""
    c = len(values) // 128
    runs = values.reshape(128, c)
    excl_in_run = np.cumsum(runs, axis=1) - runs
    totals = runs.sum(axis=1)
    inc = totals.copy()
    lane = np.arange(128) & 31
    for o in (1, 2, 4, 8, 16):
        up = np.roll(inc, o)
        inc = np.where(lane >= o, inc + up, inc)
    warp_tot = inc[31::32]
    before = inc - totals + np.array([warp_tot[:w].sum() for w in np.arange(128) >> 5])
    return (excl_in_run + before[:, None]).reshape(-1)


def test_the_block_scan_is_the_exclusive_prefix_sum():
    rng = np.random.default_rng(1)
    for n in (128, 1024, 2048):
        v = rng.integers(0, 3, n).astype(np.float64)
        assert np.array_equal(_emulate_block_scan(v), np.cumsum(v) - v)


SCAN = ("    x = load(tile(X, (1024,), (0,)), \"blocked\")\n"
        "    s = prefix_sum(x)\n"
        "    store(tile(Y, (1024,), (0,)), s)\n"
        "    n = element(s, 1023)\n"
        "    store(tile(Z, (1,), (0,)), cast(fragment(fp32, (1,), \"rows(blocked)\", "
        "init=0.0) + n, int32))\n")


def test_an_int32_prefix_sum_of_a_spread_vector_is_a_block_scan():
    k = _kernel(SCAN, "X: Tensor[1024, int32], Y: Tensor[1024, int32], Z: Tensor[1, int32]")
    cuda = generate(k).source
    assert "exclusive prefix sum of runs of 8 per thread" in cuda
    assert "__shfl_up_sync" in cuda
    assert "entry 1023 of a blocked vector, from the thread that holds it" in cuda
    assert "argus_i < (argus_lane * 8" not in cuda            # no per-entry O(n) loop


def test_a_float_prefix_sum_keeps_the_element_order():
    # fp32 sums round differently in another order: the interpreter's order is kept
    k = _kernel(SCAN.replace("n = element(s, 1023)", "n = element(cast(s, int32), 1023)"),
                "X: Tensor[1024, fp32], Y: Tensor[1024, fp32], Z: Tensor[1, int32]")
    cuda = generate(k).source
    assert "prefix sum through shared memory" in cuda
    assert "__shfl_up_sync" not in cuda


def test_a_scatter_by_spread_indices_stores_from_each_thread():
    k = _kernel("    x = load(tile(X, (1024,), (0,)), \"blocked\")\n"
                "    v = load(tile(V, (1024,), (0,)), \"blocked\")\n"
                "    scatter(Y, to_indices(x), 0, v)\n",
                "X: Tensor[1024, int32], V: Tensor[1024, fp32], Y: Tensor[1024, fp32]")
    cuda = generate(k).source
    assert "const int argus_row = (int)(x[argus_v]);" in cuda
    assert "(argus_lane & 127) == 0" not in cuda               # not one thread for all


def test_spread_indices_where_every_thread_needs_every_entry_is_a_clear_error():
    k = _kernel("    x = load(tile(X, (128,), (0,)), \"blocked\")\n"
                "    g = gather(V, to_indices(x), 0, 64, \"blocked\")\n"
                "    store(tile(Y, (128, 64), (0, 0)), g)\n",
                "X: Tensor[128, int32], V: Tensor[512, 64, fp32], Y: Tensor[128, 64, fp32]")
    with pytest.raises(CodegenError) as err:
        generate(k)
    assert "<spread>:6" in str(err.value) and "spread over the threads" in str(err.value)
    assert "rows(blocked)" in str(err.value)


def test_a_scatter_whose_indices_and_values_are_spread_differently_is_refused():
    k = _kernel("    x = load(tile(X, (128,), (0,)), \"blocked\")\n"
                "    v = load(tile(V, (128,), (0,)), \"rows(blocked)\")\n"
                "    scatter(Y, to_indices(x), 0, v)\n",
                "X: Tensor[128, int32], V: Tensor[128, fp32], Y: Tensor[1024, fp32]")
    with pytest.raises(CodegenError, match="spread over the threads differently"):
        generate(k)
