"""Tamper snapshots see rebound attributes and flipped numeric settings (in process)."""
import pytest
import torch

import argus.bench.oracle as oracle
from argus.bench import tamper
from argus.bench.loading import load_callable


def test_snapshot_sees_a_rebound_torch_function_and_harness_function(monkeypatch):
    before = tamper.snapshot()
    monkeypatch.setattr(torch, "isfinite", lambda t: torch.ones_like(t, dtype=torch.bool))
    monkeypatch.setattr(oracle, "judge", lambda *a, **k: [])
    found = tamper.changes(before, tamper.snapshot())
    assert "torch.isfinite was replaced" in found
    assert "argus.bench.oracle.judge was replaced" in found


def test_snapshot_sees_a_patched_tensor_method_and_event_timer(monkeypatch):
    before = tamper.snapshot()
    monkeypatch.setattr(torch.Tensor, "clone", lambda self: self)
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", lambda self, end: 0.0)
    found = " ".join(tamper.changes(before, tamper.snapshot()))
    assert "Tensor.clone was replaced" in found and "Event.elapsed_time was replaced" in found


def test_no_changes_means_no_report():
    assert tamper.changes(tamper.snapshot(), tamper.snapshot()) == []


def test_numeric_setting_change_is_named():
    before = tamper.numeric_settings()
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("medium" if old != "medium" else "highest")
        found = tamper.setting_changes(before, tamper.numeric_settings())
    finally:
        torch.set_float32_matmul_precision(old)
    assert any("float32_matmul_precision" in f for f in found)


def test_load_callable_errors_say_what_to_write(tmp_path):
    with pytest.raises(ValueError, match="pkg.module:name"):
        load_callable("no_colon_here")
    with pytest.raises(FileNotFoundError):
        load_callable(str(tmp_path / "missing.py") + ":f")
    f = tmp_path / "k.py"
    f.write_text("def fn(i, o):\n    pass\nvalue = 3\n")
    assert callable(load_callable(f"{f}:fn"))
    with pytest.raises(AttributeError, match="no attribute"):
        load_callable(f"{f}:other")
    with pytest.raises(TypeError, match="not callable"):
        load_callable(f"{f}:value")
