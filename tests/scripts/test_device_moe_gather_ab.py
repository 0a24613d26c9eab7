"""scripts/device_moe_gather_ab.py on the CPU: the build plan covers every launch of the timed
shapes and the correctness cases in both gather forms (the gate-ups differing only in
GATHER), the form is set through argus.ops.moe's module (not the function of that name) and
put back, and without a GPU the timing phase says so and measures nothing."""
import importlib
import json
import runpy
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "device_moe_gather_ab.py"


def _run(monkeypatch, *argv):
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *argv])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    return done.value.code


def test_the_plan_builds_both_forms_of_every_gate_up(monkeypatch, capsys):
    assert _run(monkeypatch, "plan", "--shapes", "mixtral-512,finegrained-4096",
                "--cases", "tails,decode-16") == 0
    specs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    gate_ups = [s[2] for s in specs if s[1] == "moe_gate_up"]
    forms = {}
    for ov in gate_ups:
        key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v)   # CONSUMERS: a
                           for k, v in ov.items() if k != "GATHER"))     # list in JSON
        forms.setdefault(key, set()).add(ov["GATHER"])
    assert len(forms) == 3 and all(f == {"tma", "warpgroup"} for f in forms.values()), forms
    assert {s[1] for s in specs} >= {"moe_topk", "moe_count", "moe_place", "moe_down",
                                     "moe_combine"}
    assert importlib.import_module("argus.ops.moe").GATE_UP_GATHER == "warpgroup"  # restored


def test_without_a_gpu_the_timing_says_so(monkeypatch, capsys, tmp_path):
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    assert _run(monkeypatch, "time", "--out", str(tmp_path), "--shapes", "mixtral-512") == 2
    assert "nothing measured" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())
