"""argus/ops/attention_tuned.py and argus.ops.attention's plan: shape classes and keys, and
the op planning with the cache's entry for its GPU, under explicit knobs and
ARGUS_ATTENTION_CONFIG."""
import pytest

from argus.agent.attention.config import AttentionConfig
from argus.ops import attention_tuned


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARGUS_ATTENTION_CONFIG", raising=False)
    attention_tuned.forget()
    yield tmp_path
    attention_tuned.forget()


def key(gpu="NVIDIA H200"):
    return attention_tuned.entry_key(gpu, "bf16", "bhsd", 4, 16, 16, 4096, 4096, 128, True)


def test_shape_classes_bucket_lengths_and_keep_the_kernel_apart():
    a = attention_tuned.shape_class(4, 16, 16, 4000, 4000, 128, True)
    assert a == attention_tuned.shape_class(4, 16, 16, 4096, 4096, 128, True)
    assert a != attention_tuned.shape_class(4, 16, 16, 4096, 4096, 128, False)
    assert a != attention_tuned.shape_class(4, 16, 4, 4096, 4096, 128, True)     # GQA group
    with pytest.raises(ValueError, match="bf16 or fp16"):
        attention_tuned.entry_key("g", "fp8", "bhsd", 1, 1, 1, 1, 1, 64, False)


def test_the_op_plans_with_the_cache_under_explicit_knobs_and_the_environment(monkeypatch):
    import importlib
    op = importlib.import_module("argus.ops.attention")      # the module, not the function

    built = []
    monkeypatch.setattr(op, "library_kernel", lambda *a, **kw: built.append(kw) or kw)
    p = op.Problem(4, 16, 16, 4096, 4096, 128, "bf16", "bhsd")
    tuned = AttentionConfig(BN=64, S=3, OVERLAP=1, FOLD_SCALE=1).to_json()
    attention_tuned.record(key(), tuned, 0.5, "test")
    op.plan(p, True, 0.088, 4096, 4096, gpu="NVIDIA H200")
    assert {k: built[-1][k] for k in tuned} == tuned
    op.plan(p, True, 0.088, 4096, 4096, gpu="NVIDIA H100")          # no entry there
    assert built[-1]["BN"] == 128 and "OVERLAP" not in built[-1]
    op.plan(p, True, 0.088, 4096, 4096, knobs={"BN": 32}, gpu="NVIDIA H200")
    assert built[-1]["BN"] == 32 and "OVERLAP" not in built[-1]
    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"S": 2}')
    op.plan(p, True, 0.088, 4096, 4096, gpu="NVIDIA H200")
    assert built[-1]["S"] == 2 and built[-1]["BN"] == 128
    from argus.runtime.launch_errors import LaunchError
    monkeypatch.setenv("ARGUS_ATTENTION_CONFIG", '{"S": 4}')     # 296 KB: refused, not built
    with pytest.raises(LaunchError, match="do not fit an SM"):
        op.plan(p, True, 0.088, 4096, 4096, gpu="NVIDIA H200")
    with pytest.raises(LaunchError, match="unknown knob"):
        op.plan(p, True, 0.088, 4096, 4096, knobs={"BM": 64})


def test_the_calls_lookup_is_memoised_per_shape_class():
    attention_tuned.record(key(), {"BN": 64}, 0.5, "test")
    for sq in (3000, 3500, 4096):
        assert attention_tuned.tuned_for("NVIDIA H200", "bf16", "bhsd", 4, 16, 16, sq, 4096,
                                         128, True) == {"BN": 64}
    assert len(attention_tuned._by_call) == 1
    assert attention_tuned.tuned_for("NVIDIA H200", "bf16", "bhsd", 4, 16, 16, 5000, 4096,
                                     128, True) is None


def test_an_entry_of_an_earlier_kernel_revision_is_not_read():
    """Knobs tuned over the kernel's earlier defaults (no DEFER: S = 2 was right) are not
    applied to today's kernel, where they time differently."""
    now = key("NVIDIA H100 80GB HBM3")
    old = now.replace(f"attention@{attention_tuned.REVISION}", "attention")
    assert old != now
    attention_tuned.record(old, {"BN": 128, "S": 2}, 1.0, "test")
    assert attention_tuned.tuned_knobs(now) is None
    attention_tuned.record(now, {"BN": 128, "S": 3}, 1.0, "test")
    assert attention_tuned.tuned_knobs(now)["S"] == 3
    assert attention_tuned.tuned_knobs(old)["S"] == 2       # kept on disk, not used
