"""The library flash attention (argus/kernels/attention.py) on the interpreter against a
float64 reference: both layouts, head dims 64 and 128, GQA and MQA, causal with SQ < SK
and SQ = SK (bottom-right), sequence lengths off every block size (tails in the queries and
the keys), the log-sum-exp; outputs poisoned with NaN, so a row left unwritten, or one
written into the next head's rows, fails. Exact mode (fragment-exact registers) on a small
shape. The binary checks are tests/codegen-style and need a CUDA compiler."""

import sys

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from argus.interp.machine.dtypes import BF16, FP16
from argus.kernels.attention import reference
from argus.ops.library import kernel_ir
from argus.ops.attention_configs import KNOBS, roles

LOG2E = 1.4426950408889634
CODECS = {"bf16": BF16, "fp16": FP16}


def _rand(rng, shape, dt):
    codec = CODECS[dt]
    return codec.decode(codec.encode(rng.standard_normal(shape).astype(np.float32)))


def _flat(x, layout):
    """(B, H, S, D) -> the kernel's 2-D view of that layout."""
    if layout == "bhsd":
        return np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(x.shape[0] * x.shape[2], -1))


def run(b, hq, hk, sq, sk, d, causal, layout="bhsd", mode="value", dt="bf16", bn=64, seed=0,
        scale=None):
    rng = np.random.default_rng(seed)
    q, k, v = (_rand(rng, (b, h, s, d), dt) for h, s in ((hq, sq), (hk, sk), (hk, sk)))
    scale = 1 / np.sqrt(d) if scale is None else scale
    ir = kernel_ir("attention", f"attention_{layout}", DT=dt, HD=d, G=hq // hk,
                   CAUSAL=int(causal), BN=bn, S=2, SCALE_LOG2=scale * LOG2E)
    Q, K, V = (_flat(x, layout) for x in (q, k, v))
    res = interpret(ir, {"Q": Q, "K": K, "V": V, "O": np.full(Q.shape, np.nan, np.float32),
                         "L": np.full(b * hq * sq, np.nan, np.float32),
                         "SQ": sq, "SK": sk},
                    seed=seed, mode=mode)
    assert res.ok, res.failures()
    o = np.asarray(res.outputs["O"], np.float64)
    o = o.reshape(b, hq, sq, d) if layout == "bhsd" else \
        o.reshape(b, sq, hq, d).transpose(0, 2, 1, 3)
    lse = np.asarray(res.outputs["L"], np.float64).reshape(b, hq, sq)
    return o, lse, reference(q, k, v, causal, scale)


def _close(o, lse, ref, dt="bf16"):
    ro, rl = ref
    assert np.isfinite(o).all(), "rows left unwritten (NaN poison) or overflowed"
    tol = 2 ** -7 if dt == "bf16" else 2 ** -10
    assert np.abs(o - ro).max() <= tol * max(1.0, np.abs(ro).max())
    assert np.abs(o - ro).mean() <= tol / 8
    assert np.abs(lse - rl).max() <= 1e-4 * max(1.0, np.abs(rl).max())


CASES = [  # b, hq, hk, sq, sk, d, causal, layout
    (1, 2, 2, 128, 128, 64, False, "bhsd"),         # whole blocks
    (1, 2, 1, 70, 150, 64, False, "bhsd"),          # tails in both, GQA 2
    (2, 4, 1, 77, 200, 64, True, "bhsd"),           # MQA, causal SQ < SK, two batches
    (1, 2, 2, 129, 129, 128, True, "bhsd"),         # d = 128, causal square, one-row tail
    (2, 4, 2, 70, 130, 64, True, "bshd"),           # bshd: heads as column blocks
    (1, 3, 3, 1, 65, 128, False, "bshd"),           # one query row (decode-like)
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:6])) +
                         ("c" if c[6] else "") + f"-{c[7]}")
def test_interpreter_matches_float64(case):
    b, hq, hk, sq, sk, d, causal, layout = case
    o, lse, ref = run(b, hq, hk, sq, sk, d, causal, layout, seed=sum(case[:6]))
    _close(o, lse, ref)


def test_block_of_128_keys_and_fp16():
    o, lse, ref = run(1, 2, 1, 100, 300, 64, True, dt="fp16", bn=128, seed=3)
    _close(o, lse, ref, "fp16")


def test_scale_is_an_argument():
    o, lse, ref = run(1, 2, 2, 64, 96, 64, False, scale=0.3, seed=4)
    _close(o, lse, ref)


def test_exact_mode_small_shape_with_tails_gqa_causal():
    o, lse, ref = run(1, 2, 1, 70, 100, 64, True, mode="exact", seed=5)
    _close(o, lse, ref)


def test_a_wrong_mask_is_caught_by_the_comparison():
    """The comparison can fail: the non-causal kernel against the causal reference."""
    o, lse, _ = run(1, 2, 2, 70, 100, 64, False, seed=6)
    ro, _ = run(1, 2, 2, 70, 100, 64, True, seed=6)[2]
    assert np.abs(o - ro).max() > 0.05


KNOB_IDS = (*KNOBS, "WGS", "BLOCKS_PER_SM")       # what names a variant (roles() adds more)
VARIANTS = [{"MASK": "all"}, {"SPLIT_KV": 0}, {"OVERLAP": 1}, {"LPT": 1}, {"FOLD_SCALE": 1},
            {"OVERLAP": 1, "FOLD_SCALE": 1, "LPT": 1}, {"MASK": "all", "SPLIT_KV": 0},
            {"PINGPONG": 1}, {"PINGPONG": 1, "MASK": "all", "FOLD_SCALE": 1},
            {"DEFER": 1}, {"DEFER": 1, "MASK": "all", "SPLIT_KV": 0},
            {"DEFER": 0, "S": 2}, roles(3), roles(1, 2)]


@pytest.mark.parametrize("knobs", VARIANTS,
                         ids=lambda k: "-".join(f"{a}{b}" for a, b in k.items() if a in KNOB_IDS))
def test_every_technique_knob_keeps_the_result(monkeypatch, knobs):
    """Each FA3 technique (argus/kernels/attention.py's constants) on the interpreter: causal
    and not, tails, GQA, both layouts, a multi-block key loop (BN = 64 of 300 keys)."""
    _run_with_knobs(monkeypatch, knobs, [(1, 2, 1, 150, 300, 64, True, "bhsd"),
                                         (2, 4, 2, 70, 200, 64, False, "bshd"),
                                         (1, 2, 2, 129, 129, 128, True, "bshd")], seed=0)


def _run_with_knobs(monkeypatch, knobs, cases, seed):
    """Each case (B, HQ, HK, SQ, SK, D, causal, layout) on the interpreter with `knobs` over
    the kernel's constants, checked against float64."""
    import argus.ops.library as library

    real = library.kernel_ir
    monkeypatch.setattr(sys.modules[__name__], "kernel_ir",
                        lambda *a, **kw: real(*a, **{**kw, **knobs}))
    for b, hq, hk, sq, sk, d, causal, layout in cases:
        o, lse, ref = run(b, hq, hk, sq, sk, d, causal, layout, seed=sq + seed)
        _close(o, lse, ref)


PERSISTENT = [{"PERSIST": 1, "BLOCKS": 2}, {"PERSIST": 1, "BLOCKS": 3, "DEFER": 0, "S": 2},
              {"PERSIST": 1, "BLOCKS": 1, **roles(1)},
              {"PERSIST": 1, "BLOCKS": 2, "PINGPONG": 1, "MASK": "all"}]


@pytest.mark.parametrize("knobs", PERSISTENT,
                         ids=lambda k: "-".join(f"{a}{b}" for a, b in k.items() if a in KNOB_IDS))
def test_a_persistent_grid_walks_every_tile(monkeypatch, knobs):
    """PERSIST: a few blocks (BLOCKS, here 1 to 3) each walk many (batch, head, query block)
    tiles, the K/V ring's positions and Q's barrier phases carried from tile to tile: tails,
    GQA, both layouts, a key loop of several blocks (not causal: PERSIST takes it alone)."""
    _run_with_knobs(monkeypatch, knobs, [(2, 4, 2, 150, 300, 64, False, "bhsd"),
                                         (2, 4, 2, 70, 200, 64, False, "bshd"),
                                         (1, 2, 2, 129, 129, 128, False, "bshd")], seed=1)


@pytest.mark.parametrize("knobs", [{"PERSIST": 1, "BLOCKS": 3, "DEFER": 0, "S": 2},
                                   {"PERSIST": 1, "BLOCKS": 2, **roles(1)}],
                         ids=lambda k: "-".join(f"{a}{b}" for a, b in k.items() if a in KNOB_IDS))
def test_a_persistent_causal_walk_numbers_the_ring_by_the_walked_key_blocks(monkeypatch, knobs):
    """PERSIST with causal masking: every tile visits its own number of key blocks (1 to 3
    here, the query block's diagonal and SK - SQ), and the K/V ring's position of a tile's
    first key block is the sum over the block's earlier tiles (walked): tails, GQA, SQ < SK,
    both layouts and head dims."""
    _run_with_knobs(monkeypatch, knobs, [(2, 4, 2, 150, 300, 64, True, "bhsd"),
                                         (2, 2, 1, 190, 190, 64, True, "bshd"),
                                         (1, 2, 2, 129, 260, 128, True, "bhsd")], seed=3)


@pytest.mark.parametrize("knobs", [{"LPT": 1, "HEAD_GROUP": 2}, {"HEAD_GROUP": 4}],
                         ids=lambda k: "-".join(f"{a}{b}" for a, b in k.items()))
def test_heads_in_groups_on_the_grid_keep_the_result(monkeypatch, knobs):
    """HEAD_GROUP (bhsd): grid x holds a group's heads, y the query block, z the group; every
    (head, query block) tile is still visited once: causal with a tail, GQA, both head dims."""
    _run_with_knobs(monkeypatch, knobs, [(1, 4, 2, 150, 300, 64, True, "bhsd"),
                                         (2, 2, 2, 129, 129, 128, True, "bhsd"),
                                         (1, 4, 4, 70, 200, 64, False, "bhsd")], seed=2)

