"""argus.ops.attention on the CPU: every input the op refuses, with the message naming what
to change; the PyTorch op's fake implementation under FakeTensorMode and on meta tensors
(shapes, dtypes, strides, both layouts, the lse); and the computation on the interpreter
(ARGUS_INTERPRET=1) against float64, including causal with SQ > SK (rows that keep no key:
0, lse -inf) and destination passing."""

import math

import pytest

torch = pytest.importorskip("torch")

import argus.ops as ops  # noqa: E402
from argus.kernels.attention import reference  # noqa: E402
from argus.runtime.launch_errors import LaunchError  # noqa: E402

BF16 = torch.bfloat16


@pytest.fixture(autouse=True)
def interpret(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))


def rand(*shape, seed=0, dtype=BF16):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def qkv(b=1, hq=2, hk=2, sq=64, sk=64, d=64, layout="bhsd", dtype=BF16):
    def one(h, s, seed):
        shape = (b, h, s, d) if layout == "bhsd" else (b, s, h, d)
        return rand(*shape, seed=seed, dtype=dtype)
    return one(hq, sq, 1), one(hk, sk, 2), one(hk, sk, 3)


def test_the_op_is_registered():
    assert torch.ops.argus.attention.default._schema.name == "argus::attention"


@pytest.mark.parametrize("make, message", [
    (lambda: (rand(2, 64, 64), *qkv()[1:]), "q must be 4-D"),
    (lambda: (qkv()[0].float(), *qkv()[1:]), "bf16 or fp16"),
    (lambda: (qkv()[0], qkv()[1].half(), qkv()[2]), "of one dtype"),
    (lambda: qkv(d=96), "head dim 96 is not supported"),
    (lambda: qkv(hq=3, hk=2), "multiple of the key/value heads"),
    (lambda: (qkv()[0], qkv()[1], qkv(sk=32)[2]), "k and v must have one shape"),
    (lambda: (qkv(b=2)[0], *qkv()[1:]), "same batch"),
    (lambda: (qkv()[0].transpose(1, 2), *qkv()[1:]), "must be contiguous"),
    (lambda: ("q", *qkv()[1:]), "torch tensors"),
    (lambda: (qkv()[0][:, :, :0], *qkv()[1:]), "empty attention"),
])
def test_bad_inputs_are_refused_with_the_fix(make, message):
    with pytest.raises(LaunchError, match=message):
        ops.attention(*make())


def test_bad_layout_and_scale_are_refused():
    with pytest.raises(LaunchError, match="layout must be one of bhsd, bshd"):
        ops.attention(*qkv(), layout="sbhd")
    with pytest.raises(LaunchError, match="scale must be a positive finite"):
        ops.attention(*qkv(), scale=float("nan"))


def test_devices_must_agree_and_be_checked_by_the_fake_too():
    q, k, v = qkv()
    with pytest.raises(LaunchError, match="one device"):
        ops.attention(q, k.to("meta"), v)


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_fake_tensors_get_shapes_dtypes_and_strides(layout):
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        q, k, v = qkv(b=2, hq=8, hk=2, sq=100, sk=300, d=128, layout=layout,
                      dtype=torch.float16)
        o, lse = ops.attention(q, k, v, causal=True, layout=layout, return_lse=True)
    assert isinstance(o, FakeTensor) and isinstance(lse, FakeTensor)
    assert (tuple(o.shape), o.dtype, o.stride()) == (tuple(q.shape), torch.float16, q.stride())
    assert (tuple(lse.shape), lse.dtype) == ((2, 8, 100), torch.float32)


def test_meta_tensors_and_fake_checks():
    q, k, v = (x.to("meta") for x in qkv(hq=4, hk=2, sq=10, sk=20))
    o = ops.attention(q, k, v)
    assert o.is_meta and tuple(o.shape) == (1, 4, 10, 64)
    with pytest.raises(Exception, match="multiple of the key/value heads"):
        ops.attention(*(x.to("meta") for x in qkv(hq=3, hk=2)))


def _heads_first(x, layout):
    return x if layout == "bhsd" else x.transpose(1, 2)


@pytest.mark.parametrize("b, hq, hk, sq, sk, d, causal, layout", [
    (1, 4, 2, 70, 150, 64, True, "bhsd"),
    (2, 2, 1, 130, 100, 64, True, "bshd"),       # SQ > SK: the first 30 rows keep no key
    (1, 2, 2, 33, 200, 128, False, "bshd"),
])
def test_interpreter_result_against_float64(b, hq, hk, sq, sk, d, causal, layout):
    q, k, v = qkv(b, hq, hk, sq, sk, d, layout)
    o, lse = ops.attention(q, k, v, causal=causal, layout=layout, return_lse=True)
    ro, rl = reference(*(_heads_first(x, layout).float().numpy() for x in (q, k, v)), causal)
    got = _heads_first(o, layout).double().numpy()
    assert abs(got - ro).max() <= 2 ** -7 * max(1.0, abs(ro).max())
    lse = lse.numpy()
    assert ((lse == -math.inf) == (rl == -math.inf)).all()
    fin = rl != -math.inf
    assert abs(lse[fin] - rl[fin]).max() <= 1e-4 * max(1.0, abs(rl[fin]).max())
    if causal and sq > sk:
        assert (got[:, :, :sq - sk] == 0).all()


def test_destination_passing_and_torch_op_agree():
    q, k, v = qkv(hq=2, hk=1, sq=40, sk=90)
    out = torch.full_like(q, float("nan"))
    got = ops.attention(q, k, v, scale=0.2, out=out)
    assert got is out and torch.isfinite(out).all()
    o2, _ = torch.ops.argus.attention(q, k, v, False, 0.2, "bhsd")
    assert torch.equal(o2, out)
    with pytest.raises(LaunchError, match="out must be a contiguous"):
        ops.attention(q, k, v, out=torch.empty(3))


def test_cpu_tensors_without_the_interpreter_are_refused(monkeypatch):
    monkeypatch.delenv("ARGUS_INTERPRET")
    with pytest.raises(LaunchError, match="runs on a CUDA device"):
        ops.attention(*qkv())


def test_config_override_knobs_are_checked_and_reach_the_kernel(monkeypatch):
    from argus.ops.attention_configs import config_for

    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"MASK": "edge", "LPT": 1}')
    assert config_for(128, True, 4096, 4096) == {"BN": 128, "S": 3, "MASK": "edge", "LPT": 1}
    q, k, v = qkv(hq=2, hk=1, sq=150, sk=300)
    o = ops.attention(q, k, v, causal=True)
    ro, _ = reference(*(x.float().numpy() for x in (q, k, v)), True)
    assert abs(o.double().numpy() - ro).max() <= 2 ** -7 * max(1.0, abs(ro).max())
    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"WARP_SPECIAL": 1}')
    with pytest.raises(LaunchError, match="unknown knob"):
        config_for(64, False, 10, 10)


def test_the_consumers_registers_follow_from_warpgroups_and_blocks_an_sm():
    from argus.ops.attention_configs import roles

    assert roles(2)["CONSUMER_REGS"] == 240 and roles(2)["CONSUMERS"] == (1, 2)
    assert roles(3)["CONSUMER_REGS"] == 160          # 24 + 3 x 160 <= 4 x 128
    one = roles(1, 2)                                # two blocks of 256 threads: 128 each
    assert one["CONSUMER_REGS"] == 232 and one["CONSUMERS"] == (1,)
    assert one["BLOCKS_PER_SM"] == 2
    with pytest.raises(LaunchError, match="1, 2 or 3 consumer"):
        roles(4)
    with pytest.raises(LaunchError, match="one or two blocks"):
        roles(1, 3)


def test_two_blocks_an_sm_run_and_configurations_that_cannot_fit_are_refused(monkeypatch):
    from argus.ops.attention_configs import check_fits

    check_fits({"BN": 128, "S": 3, "WGS": 1, "BLOCKS_PER_SM": 2}, 64)      # 105 KB a block
    with pytest.raises(LaunchError, match="do not fit an SM"):
        check_fits({"BN": 128, "S": 3, "WGS": 1, "BLOCKS_PER_SM": 2}, 128)
    with pytest.raises(LaunchError, match="needs WGS >= 2"):
        check_fits({"BN": 128, "S": 2, "WGS": 1, "PINGPONG": 1}, 64)
    check_fits({"BN": 128, "S": 3, "PERSIST": 1}, 128, causal=True)     # walked positions
    with pytest.raises(LaunchError, match="OVERLAP"):
        check_fits({"BN": 64, "S": 3, "PERSIST": 1, "OVERLAP": 1}, 128)
    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"WGS": 1, "BLOCKS_PER_SM": 2}')
    q, k, v = qkv(hq=2, hk=1, sq=150, sk=300)
    o = ops.attention(q, k, v, causal=True)
    ro, _ = reference(*(x.float().numpy() for x in (q, k, v)), True)
    assert abs(o.double().numpy() - ro).max() <= 2 ** -7 * max(1.0, abs(ro).max())
    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"WGS": 1, "BLOCKS_PER_SM": 2, "PINGPONG": 1}')
    with pytest.raises(LaunchError, match="PINGPONG"):
        ops.attention(q, k, v)


def test_decode_shapes_take_one_consumer_warpgroup():
    from argus.ops.attention_configs import config_for

    for d in (64, 128):
        assert config_for(d, False, 16, 4096)["WGS"] == 1       # one 64-row tile of queries
        assert config_for(d, True, 64, 8192)["WGS"] == 1
        assert "WGS" not in config_for(d, False, 65, 4096)      # two tiles: K, V read once


def test_the_check_speed_list_is_what_the_op_builds():
    """benchmarks/check_speed.py times the specialisations argus.ops.attention ships (its
    config_for and roles), persistent, two-blocks-an-SM and decode ones among them."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "check_speed", Path(__file__).resolve().parents[2] / "benchmarks" / "check_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    specs = module.attention_specs()
    assert {"PERSIST": 1} .items() <= specs[0].items()                 # d = 64, not causal
    assert specs[1]["BLOCKS_PER_SM"] == 2 and specs[1]["CONSUMER_REGS"] == 232
    assert specs[4]["WGS"] == 1 and specs[4]["CONSUMERS"] == (1,)        # decode


def test_a_head_group_is_planned_for_bhsd_only_and_a_divisor_of_the_heads():
    """HEAD_GROUP interleaves g heads' query blocks on grid x (bhsd): a plan with it builds
    the grouped grid; bshd, or a head count it does not divide, is a LaunchError."""
    from argus.ops.attention import Problem, plan
    from argus.runtime.launch_errors import LaunchError

    knobs = {"LPT": 1, "HEAD_GROUP": 4}
    launcher = plan(Problem(2, 4, 2, 300, 300, 64, "bf16", "bhsd"), True, 0.125, 300, 300,
                    knobs=knobs)
    assert launcher is not None
    with pytest.raises(LaunchError, match="bhsd layout only"):
        plan(Problem(2, 4, 2, 300, 300, 64, "bf16", "bshd"), True, 0.125, 300, 300,
             knobs=knobs)
    with pytest.raises(LaunchError, match="a multiple of it"):
        plan(Problem(1, 6, 2, 300, 300, 64, "bf16", "bhsd"), True, 0.125, 300, 300,
             knobs=knobs)
    with pytest.raises(LaunchError, match="here layout 'bhsd', PERSIST"):   # not causal
        plan(Problem(2, 4, 2, 300, 300, 64, "bf16", "bhsd"), False, 0.125, 300, 300,
             knobs={"PERSIST": 1, "HEAD_GROUP": 4})


def test_the_causal_default_launches_eight_heads_longest_first_on_few_waves(monkeypatch):
    """attention_configs.launch_order: causal bhsd grids of a few waves launch reversed with
    8 heads' query blocks interleaved; not bshd, not a head count 8 does not divide, not a
    grid of many waves, not a knob or override that sets the order itself."""
    from argus.limits import SM_COUNT
    from argus.ops.attention_configs import GROUPED_MAX_WAVES, config_for, launch_order

    grouped = {"LPT": 1, "HEAD_GROUP": 8}
    assert grouped.items() <= config_for(64, True, 2048, 2048, "bhsd", 8 * 16).items()
    assert grouped.items() <= config_for(128, True, 16384, 16384, "bhsd", 16).items()
    assert "HEAD_GROUP" not in config_for(128, True, 4096, 4096, "bshd", 64)
    assert "HEAD_GROUP" not in config_for(128, True, 4096, 4096, "bhsd", 12)
    assert "HEAD_GROUP" not in config_for(128, False, 4096, 4096, "bhsd", 64)   # PERSIST
    assert "HEAD_GROUP" not in config_for(128, True, 4096, 4096)        # heads not given
    # 16 x 64 heads x 2756 d = 64: 171 waves of two blocks an SM (measured 2% slower grouped)
    assert "HEAD_GROUP" not in config_for(64, True, 2756, 2756, "bhsd", 16 * 64)
    rows_a_block = 128                                       # two consumer warpgroups
    heads = 8 * (GROUPED_MAX_WAVES * SM_COUNT // 32 // 8)   # 32 query blocks a head
    assert launch_order({}, "bhsd", heads, 32 * rows_a_block) == grouped
    assert launch_order({}, "bhsd", heads + 8 * 8, 32 * rows_a_block) == {}
    # an override that names the order keeps it (the sweep's "forward" variant)
    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"LPT": 0, "HEAD_GROUP": 1}')
    forward = config_for(64, True, 2048, 2048, "bhsd", 8 * 16)
    assert forward["LPT"] == 0 and forward["HEAD_GROUP"] == 1


def test_the_grouped_causal_default_computes_the_reference(monkeypatch):
    """The default plan of a causal bhsd call over 8 heads (2 x 4) is the grouped, reversed
    launch; on the interpreter it matches float64, tails in SQ and SK included."""
    from argus.ops.attention import Problem, plan

    monkeypatch.delenv("ARGUS_ATTENTION_CONFIG", raising=False)
    import importlib
    attention_op = importlib.import_module("argus.ops.attention")    # the module
    seen = []
    real = attention_op.library_kernel
    monkeypatch.setattr(attention_op, "library_kernel",
                        lambda *a, **kw: seen.append(kw) or real(*a, **kw))
    q, k, v = qkv(b=2, hq=4, hk=2, sq=150, sk=200)
    o = ops.attention(q, k, v, causal=True)
    assert seen and seen[-1]["LPT"] == 1 and seen[-1]["HEAD_GROUP"] == 8
    ro, _ = reference(*(x.float().numpy() for x in (q, k, v)), True)
    assert not torch.isnan(o).any()
    assert abs(o.double().numpy() - ro).max() <= 2 ** -7 * max(1.0, abs(ro).max())
    assert plan(Problem(2, 4, 2, 150, 200, 64, "bf16", "bhsd"), True, 0.125, 200, 150) \
        is not None


@pytest.mark.parametrize("b, hq, hk, sq, sk, d, layout", [
    (1, 3, 3, 300, 300, 64, "bhsd"),     # 3 heads x 3 query blocks of 1-3 key blocks
    (2, 2, 1, 200, 330, 64, "bshd"),     # SK > SQ: the diagonal offset, GQA
])
def test_a_persistent_causal_walk_carries_the_ring_over_tiles_of_every_length(
        monkeypatch, b, hq, hk, sq, sk, d, layout):
    """PERSIST with causal masking: a grid of two blocks walks every (batch, head, query
    block) tile, each visiting its own number of key blocks; the K/V ring's position of a
    tile is the walked sum of the earlier tiles' counts (attention.tile_start)."""
    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"PERSIST": 1, "BLOCKS": 2, "WGS": 2, '
                       '"BLOCKS_PER_SM": 1, "S": 2, "BN": 128, "DEFER": 1}')
    q, k, v = qkv(b, hq, hk, sq, sk, d, layout)
    o, lse = ops.attention(q, k, v, causal=True, layout=layout, return_lse=True)
    ro, rl = reference(*(_heads_first(x, layout).float().numpy() for x in (q, k, v)), True)
    got = _heads_first(o, layout).double().numpy()
    assert not torch.isnan(o).any()
    assert abs(got - ro).max() <= 2 ** -7 * max(1.0, abs(ro).max())
    fin = rl != -math.inf
    assert abs(lse.numpy()[fin] - rl[fin]).max() <= 1e-4 * max(1.0, abs(rl[fin]).max())
