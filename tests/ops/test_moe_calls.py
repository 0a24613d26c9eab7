"""argus/ops/moe_calls.py on the CPU: the layer's plan is worked out once per layer and
switch setting, a decode batch's intermediates are kept per (plan, stream, thread) and a
prefill's are not, the keyed launches' keys fix every address their tensors have, and
calls that change the inputs (new tensors, the same tensors refilled, logits of another
dtype) each compute their own layer on the interpreter, against fp64."""

import importlib
import threading

import pytest

torch = pytest.importorskip("torch")

import argus.ops as ops  # noqa: E402
import argus.ops.library as library  # noqa: E402
from argus.ops.moe import reference  # noqa: E402

calls = importlib.import_module("argus.ops.moe_calls")
moe_module = importlib.import_module("argus.ops.moe")    # `argus.ops.moe` is the function
BF16 = torch.bfloat16


@pytest.fixture(autouse=True)
def interpret(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))


def layer(t, e, k, h=128, i=128, seed=0, logits_dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(t, h, generator=g).to(BF16)
    L = torch.randn(t, e, generator=g).to(logits_dtype)
    w13 = (torch.randn(2, e, i, h, generator=g) * h ** -0.5).to(BF16)
    w2 = (torch.randn(e, h, i, generator=g) * i ** -0.5).to(BF16)
    return x, L, w13, w2


def close(out, ref):
    out = out.double()
    return bool(torch.isfinite(out).all()) and \
        bool(((out - ref).abs() <= 2 ** -6 * ref.abs().max() + 1e-3).all())


def test_repeated_decode_calls_follow_their_inputs():
    """Kept intermediates and keyed launches: new tensors, the same x refilled in place,
    bf16 logits (copied into the kept fp32 buffer), and the first inputs again."""
    x, L, w13, w2 = layer(3, 8, 2, seed=1)
    x2, L2, _, _ = layer(3, 8, 2, seed=2)
    cases = [(x, L, w13, w2), (x2, L2, w13, w2), (x, L, w13, w2)]
    x3 = x.clone()
    x3.copy_(x2)
    cases.append((x3, L, w13, w2))
    x3.mul_(-1)
    cases.append((x3, L, w13, w2))
    cases.append((x, L2.to(BF16), w13, w2))
    for i, (xx, ll, a, b) in enumerate(cases):
        ref = reference(xx, ll, a, b, 2)
        out = ops.moe(xx, ll, a, b, 2)
        assert close(out, ref), f"call {i}"


def test_one_plan_per_layer_and_switch_setting(monkeypatch):
    x, L, w13, w2 = layer(2, 4, 2, seed=3)
    first = moe_module.layer_plan(x, L, w13, w2, 2)
    assert moe_module.layer_plan(x.clone(), L.clone(), w13, w2, 2) is first   # same layer
    assert moe_module.layer_plan(x, L, w13, w2, 2, deterministic=False) is not first
    assert moe_module.layer_plan(x, L, w13, w2, 1) is not first
    # a sweep's configuration or another gather form: the kernels change, so the plan does
    base = moe_module.config_for
    monkeypatch.setattr(moe_module, "config_for",
                        lambda *a: {**base(*a), "down": {**base(*a)["down"], "S": 3}})
    swept = moe_module.layer_plan(x, L, w13, w2, 2)
    assert swept is not first and swept.launch["down"] is not first.launch["down"]
    monkeypatch.setattr(moe_module, "config_for", base)
    monkeypatch.setattr(moe_module, "GATE_UP_GATHER", "tma")
    assert moe_module.layer_plan(x, L, w13, w2, 2) is not first
    monkeypatch.setenv("ARGUS_INTERPRET", "exact")
    monkeypatch.setattr(moe_module, "GATE_UP_GATHER", "warpgroup")
    assert moe_module.layer_plan(x, L, w13, w2, 2) is not first


def test_decode_buffers_are_kept_per_thread_and_prefill_buffers_are_not():
    x, L, w13, w2 = layer(2, 4, 2, seed=4)
    plan = moe_module.layer_plan(x, L, w13, w2, 2)
    a, kept = plan.buffers(x)
    b, _ = plan.buffers(x)
    assert kept and a is b
    other = []
    thread = threading.Thread(target=lambda: other.append(plan.buffers(x)[0]))
    thread.start()
    thread.join()
    assert other[0] is not a
    xp, Lp, w13p, w2p = layer(calls.DECODE_T + 1, 4, 2, seed=5)
    prefill = moe_module.layer_plan(xp, Lp, w13p, w2p, 2)
    c, kept_c = prefill.buffers(xp)
    d, _ = prefill.buffers(xp)
    assert not kept_c and c is not d


class Recorder:
    """A launcher that keeps, per key, the addresses its tensors had when the key was first
    seen, and checks every later launch under that key against what tensors() gives now:
    a key that does not fix its tensors' addresses fails here."""

    def __init__(self):
        self.seen = {}
        self.keys = []

    def launch_keyed(self, key, tensors):
        now = tuple(t.data_ptr() for t in tensors())
        self.keys.append(key)
        assert self.seen.setdefault(key, now) == now, f"key {key} kept stale addresses"

    def __call__(self, *tensors, grid=None):
        pass


def test_launch_keys_fix_the_addresses_of_their_tensors(monkeypatch):
    recorders = {}
    monkeypatch.setattr(library, "library_kernel",
                        lambda module, name, **kw: recorders.setdefault(name, Recorder()))
    monkeypatch.setattr(calls, "_plans", {})
    x, L, w13, w2 = layer(4, 8, 2, seed=6)
    x2, L2, w13b, w2b = layer(4, 8, 2, seed=7)
    sequence = [(x, L, w13, w2), (x2, L, w13, w2), (x, L2, w13, w2), (x, L, w13b, w2),
                (x, L, w13, w2b), (x, L, w13, w2), (x2, L2, w13b, w2b)]
    outs = [moe_module.moe_into(*args, 2) for args in sequence]     # every output kept
    for name, rec in recorders.items():
        assert len(rec.keys) == len(sequence), name
    # every launch reading a changed input got a new key; the placement (which counts the
    # entries itself at decode: no moe_count) never did
    assert "moe_count" not in recorders
    assert len(set(recorders["moe_gate_up"].keys)) == 4        # (x, w13) pairs
    assert len(set(recorders["moe_down"].keys)) == 2
    assert len(set(recorders["moe_place"].keys)) == 1
    assert len(set(recorders["moe_combine"].keys)) == len(sequence)   # outputs all alive
    assert len({o.data_ptr() for o in outs}) == len(sequence)
