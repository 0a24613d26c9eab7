"""Per-op semantics of the fragment-exact mode: math thread by thread, row vectors read
from the thread's own registers, conversions that stay inside a thread, ldmatrix and
stmatrix through their atoms, and a swizzle mismatch giving a wrong answer."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_kernel
from argus.frontend import DSLError
from argus.interp.errors import InterpretError
from argus.interp.evaluator import interpret
from argus.interp.exact.fraglayout import frag_layout
from argus.interp.exact.math import operand_regs
from argus.interp.exact.matrix import LdMatrix
from argus.interp.exact.regs import Regs
from argus.interp.machine import Faulted, Machine, round_to_bf16

import argus.interp.machine.async_ops as async_ops
from argus.interp.machine.smem_image import tile_image

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
_spec = importlib.util.spec_from_file_location(
    "interp_kernels_for_exact", Path(__file__).resolve().parents[1] / "interp_kernels.py")
_kernels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_kernels)
MATH, compile_kernel = _kernels.MATH, _kernels.compile_kernel

MIXED = '''
@kernel(grid=(1,), block=128)
def k(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    x = load(tile(X, (64, 64), (0, 0)), "blocked")
    s = load(tile(X, (64, 64), (0, 0)), "wgmma_acc_m64n64")
    store(tile(Y, (64, 64), (0, 0)), OUT)
'''

MATRIX = '''
@kernel(grid=(1,), block=128)
def k(X: Tensor[32, 8, bf16], Y: Tensor[32, 8, bf16], Z: Tensor[32, 8, bf16]):
    a = smem(bf16, (32, 8))
    b = smem(bf16, (32, 8))
    store(a[0], load(tile(X, (32, 8), (0, 0)), "blocked"))
    f = ldmatrix(a[0], 4, TRANS)
    stmatrix(b[0], f, 4, TRANS)
    store(tile(Y, (32, 8), (0, 0)), load(b[0], "blocked"))
    store(tile(Z, (32, 8), (0, 0)), f)
'''


def _x(shape=(64, 64), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_math_kernel_agrees_with_value_mode():
    kernel = compile_kernel(MATH)
    x = _x((128, 64))
    outs = {}
    for mode in ("value", "exact"):
        arrays = {"X": x, **{n: np.full((128, 64), np.nan, np.float32) for n in "YRC"}}
        result = interpret(kernel, arrays, seed=2, mode=mode)
        assert result.ok, result.failures()
        outs[mode] = result.outputs
    for name in "YRC":
        assert not np.isnan(outs["exact"][name]).any()
        np.testing.assert_array_equal(outs["exact"][name], outs["value"][name])


def _mixed(out: str):
    return compile_kernel(MIXED.replace("OUT", out))


def _run(kernel, mode, x):
    return interpret(kernel, {"X": x, "Y": np.full((64, 64), np.nan, np.float32)}, mode=mode)


def test_fragments_of_different_layouts_are_refused_by_the_frontend():
    with pytest.raises(DSLError, match="layout mismatch for add: blocked and wgmma_acc_m64n64"):
        _mixed("x + s")
    with pytest.raises(DSLError, match="rows are not held by the threads of blocked"):
        _mixed("x - row_max(s)")


class _Op:
    loc, opcode = "k.py:7:5", "math.add"


def test_the_interpreter_combines_registers_only_within_a_layout():
    """The evaluator's own guard (for IR that did not come through the frontend)."""
    blocked, acc = frag_layout("blocked", (64, 64)), frag_layout("wgmma_acc_m64n64", (64, 64))
    tile = _x()
    with pytest.raises(InterpretError, match=r"k.py:7:5: math.add combines a fragment of "
                       r"layout blocked .*convert_layout"):
        operand_regs(_Op, Regs(blocked, blocked.from_logical(tile)), acc)
    # a row vector whose rows the target's threads do not hold reads NaN there
    rows = frag_layout("rows(wgmma_acc_m64n64)", (64,))
    got = operand_regs(_Op, Regs(rows, rows.from_logical(tile[:, 0])), blocked)
    assert np.isnan(got).any()
    same = operand_regs(_Op, Regs(rows, rows.from_logical(tile[:, 0])), acc)
    np.testing.assert_array_equal(acc.to_logical(same), np.repeat(tile[:, :1], 64, axis=1))


def test_a_row_vector_is_read_from_the_threads_own_registers():
    # rows of the accumulator layout broadcast over the accumulator: every thread holds its rows
    same = _run(_mixed("s - row_max(s)"), "exact", _x()).outputs["Y"]
    np.testing.assert_allclose(same, _x() - _x().max(axis=1, keepdims=True))


def test_convert_layout_renames_registers_or_exchanges_across_threads():
    x = round_to_bf16(_x())
    kept = _run(_mixed('cast(convert_layout(cast(s, bf16), "wgmma_a_rs_16bit"), fp32)'),
                "exact", x)
    np.testing.assert_array_equal(kept.outputs["Y"], x)
    # needs other threads' registers: an exchange through the warpgroup (shared memory on
    # the GPU), every element where the blocked layout puts it
    moved = _run(_mixed('convert_layout(s, "blocked")'), "exact", x)
    np.testing.assert_array_equal(moved.outputs["Y"], x)
    np.testing.assert_array_equal(_run(_mixed('convert_layout(s, "blocked")'), "value",
                                       x).outputs["Y"], x)


def test_row_and_col_of_name_each_registers_element():
    y = _run(_mixed("cast(row_of(s) * 64 + col_of(s), fp32)"), "exact", _x()).outputs["Y"]
    np.testing.assert_array_equal(y, np.arange(64 * 64, dtype=np.float32).reshape(64, 64))


@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_then_stmatrix_round_trips(mode, trans):
    kernel = compile_kernel(MATRIX.replace("TRANS", str(trans)))
    x = round_to_bf16(_x((32, 8)))
    result = interpret(kernel, {"X": x, "Y": np.full((32, 8), np.nan, np.float32),
                                "Z": np.full((32, 8), np.nan, np.float32)}, mode=mode)
    assert result.ok, result.failures()
    np.testing.assert_array_equal(result.outputs["Y"], x)
    np.testing.assert_array_equal(result.outputs["Z"], x)


@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_registers_follow_the_ptx_distribution(trans):
    m = Machine(exact=True)
    buf = m.smem.alloc("a", "bf16", (32, 8), stages=1, swizzle="none")
    x = np.arange(256, dtype=np.float32).reshape(32, 8)
    buf.stage(0).store_codes(buf.dtype.encode(x))
    layout = frag_layout("ldmatrix_x4" + ("_trans" if trans else ""), (32, 8))
    got = {}

    def warp():
        got["regs"] = yield LdMatrix(buf.stage(0), layout, 4)

    m.spawn("w", warp())
    assert m.run().ok
    regs = got["regs"].data
    for lane in range(32):
        for i in range(4):          # register i: matrix i
            for h in range(2):      # half h of the 32-bit register
                if trans:
                    want = x[8 * i + 2 * (lane % 4) + h, lane // 4]
                else:
                    want = x[8 * i + lane // 4, 2 * (lane % 4) + h]
                assert regs[lane, 2 * i + h] == want, (lane, i, h)


def test_ldmatrix_exact_needs_a_stack_of_8x8_matrices():
    src = MATRIX.replace("32, 8", "16, 16").replace("TRANS", "False")
    kernel = compile_kernel(src)
    with pytest.raises(InterpretError):
        interpret(kernel, {n: np.zeros((16, 16), np.float32) for n in "XYZ"}, mode="exact")


def _gemm_error(mode):
    kernel = parse_kernel(EXAMPLES / "gemm.py", "gemm")
    rng = np.random.default_rng(9)
    a = round_to_bf16(rng.standard_normal((128, 128)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((256, 128)).astype(np.float32))
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((128, 256), np.nan, np.float32)},
                       mode=mode, blocks=[0])
    assert result.ok, result.failures()
    return np.abs(result.outputs["C"] - a @ b.T).max() / np.abs(a @ b.T).max()


def test_tma_landing_unswizzled_gives_a_wrong_answer_in_exact_mode(monkeypatch):
    """If TMA wrote the box without the buffer's 128B swizzle, the wgmma descriptor reads
    (which apply it) see permuted k: exact mode computes a wrong C, value mode cannot tell."""
    assert _gemm_error("exact") < 2 ** -7

    def unswizzled(base, shape, eb, swizzle, start, stop):
        return np.ascontiguousarray(tile_image(base, shape, eb, swizzle)[start:stop])

    monkeypatch.setattr(async_ops, "tma_image", unswizzled)
    assert _gemm_error("exact") > 0.1
    assert _gemm_error("value") < 2 ** -7


TMA_OOB = '''
@kernel(grid=(1,), block=128)
def k(X: Tensor["R", 64, bf16], Y: Tensor[64, 64, fp32]):
    buf = smem(bf16, (64, 64), swizzle="128B")
    bar = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(bar[0], 1)
    fence_mbarrier_init()
    with elect_one():
        expect_tx(bar[0], nbytes(buf[0]))
        tma_load(buf[0], tile(X, (64, 64), (0, 0)), bar[0])
    wait(bar[0], 0)
    store(tile(Y, (64, 64), (0, 0)), cast(load(buf[0], "blocked"), fp32))
'''


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_tma_out_of_bounds_rows_land_as_zero_and_count_toward_tx(mode):
    x = round_to_bf16(_x((40, 64)))
    result = interpret(compile_kernel(TMA_OOB), {"X": x, "Y": np.full((64, 64), np.nan,
                                                                      np.float32)}, mode=mode)
    assert result.ok, result.failures()          # the full box's bytes completed the barrier
    np.testing.assert_array_equal(result.outputs["Y"][:40], x)
    assert (result.outputs["Y"][40:] == 0).all()


def test_both_modes_replay_the_same_interleaving():
    """Exact mode changes what a value is, not the choreography: one seed, one trace."""
    kernel = parse_kernel(EXAMPLES / "gemm.py", "gemm")
    rng = np.random.default_rng(5)
    a = round_to_bf16(rng.standard_normal((128, 192)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((256, 192)).astype(np.float32))
    traces = []
    for mode in ("value", "exact"):
        result = interpret(kernel, {"A": a, "B": b, "C": np.full((128, 256), np.nan,
                                                                 np.float32)},
                           seed=7, mode=mode, blocks=[0])
        traces.append(result.runs[0].trace)
    assert traces[0] and traces[0] == traces[1]


def test_stmatrix_of_a_warpgroup_fragment_says_to_convert_first():
    src = MATRIX.replace("TRANS", "False").replace(
        "    f = ldmatrix(a[0], 4, False)\n",
        "    f = load(tile(X, (32, 8), (0, 0)), \"blocked\")\n")
    kernel = compile_kernel(src)
    arrays = {n: np.zeros((32, 8), np.float32) for n in "XYZ"}
    assert interpret(kernel, arrays, mode="value").ok
    with pytest.raises(InterpretError, match=r"stmatrix stores a warp's 32 x 8 registers "
                       r"\(stmatrix_x4\); the fragment holds 128 x 2 .*convert_layout"):
        interpret(kernel, arrays, mode="exact")


def test_an_unswizzled_wgmma_operand_faults_in_exact_mode_only():
    """A declared without a swizzle: TMA lands it row-major, which no wgmma descriptor
    reads (the backend refuses it too); value mode cannot tell."""
    src = (EXAMPLES / "gemm.py").read_text()
    old = 'a_s = smem(bf16, (BM, BK), stages=S, swizzle="128B")'
    assert old in src
    from argus.frontend.parse import parse_source
    kernel = parse_source(src.replace(old, old.replace("128B", "none")), "gemm.py")["gemm"]
    rng = np.random.default_rng(2)
    a = round_to_bf16(rng.standard_normal((128, 64)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((256, 64)).astype(np.float32))
    runs = {mode: interpret(kernel, {"A": a, "B": b, "C": np.full((128, 256), np.nan,
                                                                  np.float32)},
                            mode=mode, blocks=[0]).runs[0] for mode in ("value", "exact")}
    assert runs["value"].ok
    assert isinstance(runs["exact"], Faulted), runs["exact"]
    assert "no wgmma descriptor reads the K-major none tile" in str(runs["exact"].error)
    assert 'swizzle="128B"' in str(runs["exact"].error)
