"""argus/ops/moe_graphs.py: when a decode call's launches are captured, replayed or run
one by one (a recording capture stands in for CUDA; the GPU tests are in
tests/ops/test_moe_gpu.py)."""

from argus.ops import moe_graphs
from argus.ops.moe_graphs import Graphs


class Recorder:
    """capture() that records what it captured; its replays run the launches and count."""

    def __init__(self):
        self.captured = []
        self.replayed = []

    def __call__(self, launch):
        self.captured.append(launch)

        def replay(launch=launch):
            self.replayed.append(launch)
            launch()
        return replay


def test_a_key_seen_once_runs_plain_then_is_captured_then_replayed():
    rec = Recorder()
    g = Graphs(rec)
    ran = []
    for _ in range(4):
        g.run(("x", 1), lambda: ran.append(1))
    assert len(ran) == 4                         # every call did its work
    assert len(rec.captured) == 1 and len(rec.replayed) == 3
    assert g.captures == 1 and g.replays == 2    # the replay after the capture not counted


def test_keys_of_many_layers_each_get_their_graph():
    rec = Recorder()
    g = Graphs(rec)
    layers = [("layer", i) for i in range(32)]   # 32 layers of one shape, one kept set
    for _ in range(3):
        for key in layers:
            g.run(key, lambda: None)
    assert g.captures == 32 and g.replays == 32


def test_new_addresses_every_call_never_capture():
    rec = Recorder()
    g = Graphs(rec)
    for i in range(100):
        g.run(("fresh", i), lambda: None)
    assert rec.captured == [] and not g.off


def test_graphs_kept_are_bounded_least_recently_used_first(monkeypatch):
    monkeypatch.setattr(moe_graphs, "KEEP", 2)
    rec = Recorder()
    g = Graphs(rec)
    for key in ("a", "a", "b", "b", "a", "c", "c"):   # c's capture drops b, not a (used)
        g.run(key, lambda: None)
    assert g.captures == 3 and set(g._graphs) == {"a", "c"}


def test_churning_addresses_stop_the_captures(monkeypatch):
    monkeypatch.setattr(moe_graphs, "PATIENCE", 3)
    monkeypatch.setattr(moe_graphs, "KEEP", 2)
    rec = Recorder()
    g = Graphs(rec)
    for i in range(20):                          # each key twice, then never again
        g.run(i, lambda: None)
        g.run(i, lambda: None)
    assert g.off and g.wasted == 3 and g.captures == 5      # two kept, three dropped


def test_graphs_replayed_often_keep_capturing(monkeypatch):
    monkeypatch.setattr(moe_graphs, "PATIENCE", 3)
    monkeypatch.setattr(moe_graphs, "KEEP", 2)
    rec = Recorder()
    g = Graphs(rec)
    for i in range(20):                          # each key captured, replayed 8 times
        for _ in range(10):
            g.run(i, lambda: None)
    assert not g.off and g.captures == 20 and g.wasted == 0


def test_a_refused_capture_turns_graphs_off_and_the_call_still_runs():
    def refuse(launch):
        raise RuntimeError("operation not permitted when stream is capturing")
    g = Graphs(refuse)
    ran = []
    for _ in range(3):
        g.run("k", lambda: ran.append(1))
    assert len(ran) == 3 and g.off and "not permitted" in g.failure and g.captures == 0


def test_decode_graphs_are_off_by_default_and_a_plan_of_their_own(monkeypatch):
    """Off until measured; the switch is in the plan key (a plan built with it off is not
    reused with it on)."""
    import importlib

    import torch
    moe = importlib.import_module("argus.ops.moe")
    assert moe.DECODE_GRAPHS is False
    x, L = torch.zeros(1, 128, dtype=torch.bfloat16), torch.zeros(1, 8)
    w13 = torch.zeros(2, 8, 128, 128, dtype=torch.bfloat16)
    w2 = torch.zeros(8, 128, 128, dtype=torch.bfloat16)
    off = moe.layer_plan(x, L, w13, w2, 2)
    monkeypatch.setattr(moe, "DECODE_GRAPHS", True)
    on = moe.layer_plan(x, L, w13, w2, 2)
    assert on is not off and on.graphs and not off.graphs
