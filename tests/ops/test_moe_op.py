"""argus.ops.moe on the CPU: the layer validation (a LaunchError naming what to change for
every bad argument), the torch op argus::moe with its fake implementation (FakeTensorMode,
meta tensors, opcheck's schema and fake checks), and the whole layer on the interpreter
(ARGUS_INTERPRET=1: every DSL kernel, no torch fallback) against the fp64 torch reference,
including an empty expert, every token on one expert, a single token and both combine
modes; the reference itself is checked against a per-token loop."""

import importlib
import pytest

torch = pytest.importorskip("torch")

import argus.ops as ops  # noqa: E402
from argus.ops.moe import config_for, kernels_for, reference  # noqa: E402
from argus.runtime.launch_errors import LaunchError  # noqa: E402

BF16 = torch.bfloat16


@pytest.fixture(autouse=True)
def interpret(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))


def layer(t, e, k, h=128, i=128, seed=0, dtype=BF16, logits="random"):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(t, h, generator=g).to(dtype)
    L = torch.randn(t, e, generator=g)
    if logits == "empty":
        L[:, 1] = -30.0
    elif logits == "one":
        L[:, 0] += 30.0
    w13 = (torch.randn(2, e, i, h, generator=g) * h ** -0.5).to(dtype)
    w2 = (torch.randn(e, h, i, generator=g) * i ** -0.5).to(dtype)
    return x, L, w13, w2


def close(out, ref):
    out = out.double()
    if not torch.isfinite(out).all():
        return False
    return bool(((out - ref).abs() <= 2 ** -6 * ref.abs().max() + 1e-3).all())


def test_the_op_is_registered_under_the_argus_namespace():
    assert torch.ops.argus.moe.default._schema.name == "argus::moe"


@pytest.mark.parametrize("change, message", [
    (lambda a: dict(a, x=a["x"].float()), "x must be bf16 or fp16"),
    (lambda a: dict(a, x=a["x"][None]), r"x must be \(T, H\)"),
    (lambda a: dict(a, router_logits=a["router_logits"][:-1]), r"router_logits must be \(T, E\)"),
    (lambda a: dict(a, router_logits=a["router_logits"].int()), "must be a float tensor"),
    (lambda a: dict(a, w13=a["w13"].permute(1, 0, 2, 3).reshape(8, 512, 128)),
     r"w13 must be \(2, E, I, H\).*converts with"),
    (lambda a: dict(a, w2=a["w2"].transpose(1, 2).contiguous()), r"w2 must be \(E, H, I\)"),
    (lambda a: dict(a, w2=a["w2"].half()), "w2 must have x's dtype"),
    (lambda a: dict(a, x=a["x"].t().contiguous().t()), "x must be contiguous"),
    (lambda a: dict(a, top_k=9), r"top_k must be an int in 1\.\.E = 1\.\.8"),
    (lambda a: dict(a, top_k=0), "top_k must be an int"),
    (lambda a: dict(a, top_k=True), "top_k must be an int"),
    (lambda a: dict(a, x=a["x"][:, :64].contiguous(), w13=a["w13"][..., :64].contiguous(),
                    w2=a["w2"][:, :64].contiguous()), "must be positive multiples of 128"),
    (lambda a: dict(a, w13=a["w13"].to("meta")), "one device"),
])
def test_bad_arguments_are_refused_with_what_to_change(change, message):
    x, L, w13, w2 = layer(10, 8, 2, h=128, i=256)
    args = change({"x": x, "router_logits": L, "w13": w13, "w2": w2, "top_k": 2})
    with pytest.raises(LaunchError, match=message):
        ops.moe(**args)


def test_fake_tensors_get_the_output_shape_without_computing():
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        x, L = torch.empty(100, 256, dtype=torch.float16), torch.empty(100, 8)
        w13 = torch.empty(2, 8, 384, 256, dtype=torch.float16)
        w2 = torch.empty(8, 256, 384, dtype=torch.float16)
        out = ops.moe(x, L, w13, w2, 2)
    assert isinstance(out, FakeTensor)
    assert (tuple(out.shape), out.dtype, out.stride()) == ((100, 256), torch.float16, (256, 1))


def test_meta_tensors_run_the_fake_implementation_and_its_checks():
    x, L = torch.empty(7, 128, dtype=BF16, device="meta"), torch.empty(7, 4, device="meta")
    w13 = torch.empty(2, 4, 128, 128, dtype=BF16, device="meta")
    w2 = torch.empty(4, 128, 128, dtype=BF16, device="meta")
    out = torch.ops.argus.moe(x, L, w13, w2, 3, True, True)
    assert out.is_meta and tuple(out.shape) == (7, 128)
    with pytest.raises(LaunchError, match="top_k"):
        torch.ops.argus.moe(x, L, w13, w2, 5, True, True)


def test_opcheck_schema_and_fake_agree_with_the_real_op():
    from torch.library import opcheck

    x, L, w13, w2 = layer(9, 4, 2)
    result = opcheck(torch.ops.argus.moe.default, (x, L, w13, w2, 2, True, True),
                     test_utils=("test_schema", "test_faketensor"))
    assert set(result.values()) == {"SUCCESS"}, result


@pytest.mark.parametrize("t, e, k, logits, det, renorm", [
    (37, 8, 2, "random", True, True),
    (50, 4, 2, "one", False, True),
    (29, 8, 3, "empty", True, False),
    (1, 16, 4, "random", True, True),
    (70, 8, 2, "random", True, True),      # count over 140 choices: 1024-entry tiles
    (130, 4, 1, "random", False, True),    # place's pass over 130 tokens: 1024 too
])
def test_the_layer_on_the_interpreter_matches_fp64(t, e, k, logits, det, renorm):
    x, L, w13, w2 = layer(t, e, k, seed=t, logits=logits)
    out = ops.moe(x, L, w13, w2, k, renorm, det)
    assert out.shape == x.shape and out.dtype == x.dtype
    ref = reference(x, L, w13, w2, k, renorm)
    assert close(out, ref)
    if logits == "random":     # renormalisation matters here, and is the one asked for
        assert not close(out, reference(x, L, w13, w2, k, not renorm))


@pytest.mark.parametrize("t, e, k, logits", [(37, 8, 2, "random"), (29, 8, 3, "empty"),
                                              (50, 4, 2, "one")])
def test_the_layer_with_the_tma_gather_matches_fp64(monkeypatch, t, e, k, logits):
    """GATE_UP_GATHER = "tma" (the reference form): the gate-up's token rows by one TMA box
    a row, passed through config_for to the kernel like the other knobs."""
    import importlib
    op = importlib.import_module("argus.ops.moe")     # `import argus.ops.moe` is the function
    monkeypatch.setattr(op, "GATE_UP_GATHER", "tma")
    assert kernels_for(t, e, 128, 128, k, True, True, "bf16")["gate_up"][2]["GATHER"] == "tma"
    x, L, w13, w2 = layer(t, e, k, seed=t + 1, logits=logits)
    assert close(ops.moe(x, L, w13, w2, k), reference(x, L, w13, w2, k))


def test_the_gate_up_gather_defaults_to_the_measured_faster_warpgroup_form():
    for t in (16, 4096):
        assert config_for(t, 8, 4096, 14336, 2)["gate_up"]["GATHER"] == "warpgroup"


def test_fp16_layer_and_zero_tokens():
    x, L, w13, w2 = layer(20, 4, 2, seed=3, dtype=torch.float16)
    assert close(ops.moe(x, L, w13, w2, 2), reference(x, L, w13, w2, 2))
    empty = ops.moe(x[:0], L[:0], w13, w2, 2)
    assert tuple(empty.shape) == (0, 128)


def test_the_reference_is_the_per_token_layer():
    x, L, w13, w2 = layer(6, 4, 2, seed=5)
    ref = reference(x, L, w13, w2, 2)
    for t in range(6):
        p = torch.softmax(L[t].double(), 0)
        top = torch.argsort(-L[t], stable=True)[:2]
        w = p[top] / p[top].sum()
        want = 0
        for j, e in enumerate(top.tolist()):
            g = w13[0, e].double() @ x[t].double()
            u = w13[1, e].double() @ x[t].double()
            want = want + w[j] * (w2[e].double() @ (torch.nn.functional.silu(g) * u))
        assert torch.allclose(ref[t], want)


def test_the_router_tiles_hold_a_small_pass_whole_and_never_add_passes():
    from argus.ops.moe import route_block_entries
    assert [route_block_entries(n) for n in (1, 64, 128, 129, 4096)] == [128] * 3 + [1024] * 2
    fine = kernels_for(1, 64, 2048, 1408, 6, True, True, "bf16")
    assert fine["place"][2]["BS"] == 128
    batch = kernels_for(64, 64, 2048, 1408, 6, True, True, "bf16")      # 384 choices
    assert batch["place"][2]["BS"] == 128
    prefill = kernels_for(4096, 64, 2048, 1408, 6, True, True, "bf16")
    assert prefill["count"][2]["BS"] == prefill["place"][2]["BS"] == 1024


def test_decode_routes_in_two_launches_and_prefill_in_three(monkeypatch):
    import importlib
    moe_mod = importlib.import_module("argus.ops.moe")      # the module (argus.ops.moe is the op)
    assert config_for(64, 8, 4096, 14336, 2) != config_for(65, 8, 4096, 14336, 2)
    decode = kernels_for(64, 64, 2048, 1408, 6, True, False, "bf16")
    assert list(decode) == ["topk", "place", "gate_up", "down", "combine"]
    assert decode["place"][2]["COUNT_HERE"] == 1
    assert decode["combine"][1] == "moe_combine_atomic" and decode["gate_up"][2]["E"] == 64
    prefill = kernels_for(65, 64, 2048, 1408, 6, True, False, "bf16")
    assert list(prefill) == ["topk", "count", "place", "gate_up", "down", "combine"]
    assert "COUNT_HERE" not in prefill["place"][2]
    monkeypatch.setattr(moe_mod, "ROUTE_COUNT_HERE", False)           # the switch
    assert list(kernels_for(1, 64, 2048, 1408, 6, True, True, "bf16"))[:3] == \
        ["topk", "count", "place"]


def test_the_launches_one_by_one_are_the_layer():
    # what `argus bench moe --breakdown` times alone: the six launches in order, on buffers
    # they fill for each other; run in order they give the layer's result
    from argus.ops.moe import launches
    for t, count in ((40, []), (70, ["count"])):          # decode, prefill
        x, L, w13, w2 = layer(t, 4, 2, seed=3)
        out, steps = launches(x, L, w13, w2, 2)
        assert [role for role, _ in steps] == ["topk", *count, "place", "gate_up", "down",
                                                "combine"]
        out.fill_(float("nan"))
        for _, step in steps:
            step()
        assert close(out, reference(x, L, w13, w2, 2))


def test_the_check_speed_list_is_what_the_op_builds():
    """benchmarks/check_speed.py --all times the kernels argus.ops.moe launches for issue
    17's layer shapes: each of them parses with its overrides, and the decode, prefill,
    64- and 128-expert grouped GEMMs are among them."""
    import importlib.util
    from pathlib import Path

    from argus.frontend import parse_file

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("check_speed",
                                                  root / "benchmarks" / "check_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.moe_specs()
    gemms = {(name, o["E"], o.get("WG", 2)) for _, name, o in rows
             if name in ("moe_gate_up", "moe_down")}
    assert {("moe_gate_up", 64, 1), ("moe_gate_up", 64, 2), ("moe_down", 128, 2),
            ("moe_down", 8, 1)} <= gemms
    assert len(rows) == len({(p, n, tuple(sorted(o.items()))) for p, n, o in rows})
    for path, name, overrides in rows:
        assert name in parse_file(root / path, overrides=overrides)
    assert all(row in module.repo_kernels() for row in rows)


def test_decode_tiles_narrow_only_where_wide_ones_leave_sms_idle():
    """decode_tile_width: 96- or 64-wide weight tiles where the 128-wide items (hit experts
    x n-tiles) fill under a wave of the 132 blocks and the narrow ones cut the busiest
    block's bytes by 15% or more; 128 elsewhere (the measured decode default). config_for
    takes it only with DECODE_TILE_RULE on (unmeasured, off)."""
    from argus.ops.moe import decode_tile_width

    assert decode_tile_width(1, 64, 6, 1408) == 64       # 66 items -> 132
    assert decode_tile_width(1, 64, 6, 2048) == 96       # its down: 96 items -> 132
    assert decode_tile_width(1, 8, 2, 4096) == 64        # Mixtral down: 64 items -> 128
    assert decode_tile_width(1, 8, 2, 14336) == 128      # Mixtral gate-up: 224 items already
    assert decode_tile_width(16, 64, 6, 1408) == 128     # ~51 experts hit: 561 items
    assert decode_tile_width(64, 64, 6, 2048) == 128
    op = importlib.import_module("argus.ops.moe")      # (argus.ops.moe is also the op)

    assert config_for(1, 64, 2048, 1408, 6)["gate_up"]["BN"] == 128    # the rule is off
    try:
        op.DECODE_TILE_RULE = True
        cfg = config_for(1, 64, 2048, 1408, 6)
        assert (cfg["gate_up"]["BN"], cfg["gate_up"]["S"]) == (64, 8)
        assert (cfg["down"]["BN"], cfg["down"]["S"]) == (96, 10)
    finally:
        op.DECODE_TILE_RULE = False
