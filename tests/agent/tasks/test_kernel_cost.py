"""The cost model of any kernel, over its interpreter run: a one-stage ring exposes the load
latency a two-stage ring hides; signals follow the totals; the estimate is labelled."""
from pathlib import Path

import numpy as np

from argus.agent.tasks.kernel_cost import launch_timer, signals, timing
from argus.frontend import parse_file
from argus.interp.evaluator import bind_symbols, interpret

REPO = Path(__file__).resolve().parents[3]


def _estimate(path, name, arrays):
    ir = parse_file(str(path))[name]
    timer = launch_timer(ir, bind_symbols(ir, arrays))
    with timing(timer):
        assert interpret(ir, dict(arrays)).ok
    return timer.estimate(ir)


def _attention(T=512):
    rng = np.random.default_rng(0)
    arrays = {n: rng.standard_normal((T, 64)).astype(np.float32) for n in "QKV"}
    arrays["O"] = np.zeros((T, 64), np.float32)
    return arrays


def test_one_stage_ring_is_estimated_slower_than_two():
    arrays = _attention()
    two = _estimate(REPO / "examples/flash_attention.py", "flash_fwd", arrays)
    one = _estimate(REPO / "tests/fixtures/attention/flash_attention_one_stage.py",
                    "flash_fwd", arrays)
    assert one["flops"] == two["flops"] and one["bytes"] == two["bytes"]   # same work
    assert one["seconds"] > 1.3 * two["seconds"]                           # exposed latency
    # causal: block bx visits 2 (bx + 1) key blocks; per key block each of 2 consumers
    # issues two 64 x 64 x 64 wgmmas (S = Q K^T, O += P V)
    key_blocks = sum(2 * (bx + 1) for bx in range(512 // 128))
    assert two["flops"] == key_blocks * 2 * 2 * (2 * 64 ** 3)
    assert "not a measurement" in two["source"]


def test_rules_are_restored_after_timing():
    from argus.interp.ops import RULES
    before = dict(RULES)
    _estimate(REPO / "examples/copy.py", "copy",
              {"X": np.ones((128, 128), np.float32), "Y": np.zeros((128, 128), np.float32)})
    assert RULES == before


def test_signals_from_totals():
    base = {"memory_utilisation": 0.0, "tensor_utilisation": 0.0, "sfu_utilisation": 0.0,
            "flops": 0.0, "blocks": 132, "blocks_per_sm": 1, "seconds": 1.0}
    assert signals({**base, "memory_utilisation": 0.8}) == ["memory-bound"]
    assert "latency-bound" in signals(base)
    assert "low-tensor-utilisation" in signals({**base, "flops": 1.0, "tensor_utilisation": 0.1})
    assert "low-occupancy" in signals({**base, "blocks": 10})
    assert "wave-quantisation" in signals({**base, "blocks": 140})
