"""argus/bench/moe_bench.py on the CPU: the two peers compute the same layer as the fp64
reference (so the timing compares like with like), the comparison never passes NaN or a
wrong layer, the geomean and the planned kernels, and without a GPU the command says so and
measures nothing."""

import math

import pytest

torch = pytest.importorskip("torch")

from argus.bench import moe_bench as mb  # noqa: E402
from argus.ops.moe import reference  # noqa: E402


def inputs(t=40, e=8, k=2, h=128, i=256, logits="random", seed=0):
    return mb.make_inputs(torch, t, e, k, h, i, logits, seed, "cpu")


@pytest.mark.parametrize("logits", ["random", "one", "empty"])
def test_both_peers_compute_the_reference_layer(logits):
    t, e, k, h, i = 40, 8, 2, 128, 256
    x, L, w13, w2 = inputs(t, e, k, h, i, logits)
    w13_cat = w13.permute(1, 0, 2, 3).reshape(e, 2 * i, h).contiguous()
    ref = reference(x, L, w13, w2, k)
    everything = torch.arange(t)
    loop = mb.peer_loop(torch, x, L, w13_cat, w2, k, i)
    assert mb.compare(torch, loop, ref, everything)[0]
    if getattr(torch, "_grouped_mm", None) is not None:
        gm = mb.peer_grouped_mm(torch, x, L, w13_cat.transpose(1, 2), w2.transpose(1, 2), k, i)
        assert mb.compare(torch, gm, ref, everything)[0]


def test_the_comparison_refuses_nan_and_a_wrong_layer():
    x, L, w13, w2 = inputs()
    ref = reference(x, L, w13, w2, 2)
    sample = torch.arange(10)
    good = ref.to(torch.bfloat16)
    assert mb.compare(torch, good, ref[sample], sample)[0]
    bad = good.clone()
    bad[3, 5] = float("nan")
    assert not mb.compare(torch, bad, ref[sample], sample)[0]
    other = reference(x, L, w13, w2, 2, renormalize=False).to(torch.bfloat16)
    assert not mb.compare(torch, other, ref[sample], sample)[0]


def test_geomean_and_flops():
    assert math.isclose(mb.geomean([1.0, 4.0]), 2.0)
    assert mb.geomean([]) is None and mb.geomean([None, float("nan")]) is None
    assert mb.flops(4096, 2, 4096, 14336) == 6 * 4096 * 2 * 4096 * 14336
    assert mb.is_decode(64) and not mb.is_decode(512)


def test_planned_kernels_cover_every_launch_of_the_run():
    plans = mb.planned_kernels([mb.SHAPES["mixtral-4096"], mb.SHAPES["decode-mixtral-1"]],
                               with_correctness=False)
    names = {(m, n) for m, n, _ in plans}
    assert ("moe_combine", "moe_combine_atomic") in names and len(names) == 7
    downs = {tuple(sorted(ov.items())) for m, n, ov in plans if n == "moe_down"}
    assert len(downs) == 2        # prefill and decode configurations
    assert len(plans) == len({(m, n, tuple(sorted(o.items()))) for m, n, o in plans})


def test_without_a_gpu_it_says_so_and_measures_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert mb.main(["--out", str(tmp_path)]) == 0
    assert "no CUDA GPU is visible; nothing measured" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_unknown_shapes_are_a_usage_error():
    with pytest.raises(SystemExit) as err:
        mb.main(["--shapes", "mixtral-4096,nope"])
    assert err.value.code == 2


def test_the_sweep_times_each_configuration_it_names(monkeypatch):
    """The sweep sets argus.ops.moe's config_for for each row (it once set an attribute of the
    function argus.ops.moe instead, and timed the default configuration every time); each
    variant's overrides go over the library's choice, so the knobs it does not name (the
    gather) stay the library's, and a decode variant runs only on decode shapes."""
    import importlib

    op = importlib.import_module("argus.ops.moe")
    seen = []
    monkeypatch.setattr(mb, "SWEEP_SHAPES", ("mixtral-512", "decode-mixtral-16"))
    monkeypatch.setattr(mb, "make_inputs", lambda *a, **k: (None, None, None, None))
    monkeypatch.setattr(mb, "time_ms", lambda torch, fns, rounds=5: fns["argus"]() or {"argus": 1.0})
    monkeypatch.setattr(mb, "expert_bytes_read", lambda *a: (8, 3e9))
    monkeypatch.setattr(op, "moe", lambda x, L, w13, w2, k: seen.append(op.config_for(512, 8, 4096, 14336, 2)))
    monkeypatch.setattr("argus.ops.moe", op.moe, raising=False)
    rows = mb.sweep(None, 1e12, None)
    assert [r["config"] for r in rows] == seen
    prefill = [r for r in rows if r["shape"] == "mixtral-512"]
    decode = [r for r in rows if r["shape"] == "decode-mixtral-16"]
    assert [r["variant"] for r in prefill] == [v["label"] for v in mb.SWEEP
                                               if v["when"] in ("any", "prefill")]
    assert [r["variant"] for r in decode] == [v["label"] for v in mb.SWEEP
                                              if v["when"] in ("any", "decode")]
    assert all(r["config"]["gate_up"]["GATHER"] == op.GATE_UP_GATHER for r in rows)
    # no variant's overrides leak into the next (the sweep once took its base from the
    # config_for it had just replaced, so m_major and BK stayed on for every later row)
    for r in rows:
        variant = next(v for v in mb.SWEEP if v["label"] == r["variant"])
        t = mb.SHAPES[r["shape"]][0]
        base = op.config_for(t, 8, 4096, 14336, 2)
        for part in ("gate_up", "down"):
            assert r["config"][part] == {**base[part], **variant.get(part, {})}, r
    bk = next(r for r in decode if r["variant"] == "BK128")["config"]
    assert bk["gate_up"]["BK"] == 128 and bk["down"]["BK"] == 128
    assert bk["gate_up"]["BN"] == op.config_for(16, 8, 4096, 14336, 2)["gate_up"]["BN"]
    assert all("bw_ratio" in r for r in decode) and not any("bw_ratio" in r for r in prefill)