"""A release barrier that frees buffers landing on several data barriers (the library
attention's kv_empty frees K, which lands on k_full, and V, on v_full): releasing a stage
while the wgmma reading its V is still in flight is caught, for V as for K. Until
2026-12-06 the stage pass paired kv_empty with k_full alone, so an early release of V
verified clean; the interpreter shows the race (the producer refills V under the P V
wgmma)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret
from argus.verify import driver

PATH = Path(__file__).resolve().parents[3] / "argus" / "kernels" / "attention.py"
RELEASE_AFTER_WAIT = ("        wgmma_wait(0)\n        with elect_one():\n"
                      "            arrive(kv_empty[s])\n")
RELEASE_BEFORE_WAIT = ("        with elect_one():\n            arrive(kv_empty[s])\n"
                       "        wgmma_wait(0)\n")
DEFERRED_RELEASE = ("    if DEFER:\n        if j > 0:      # P V of block j - 1 is done too: its "
                    "stage is free\n            with elect_one():\n"
                    "                arrive(kv_empty[(g - 1) % S])\n")
DEFERRED_AFTER_WAIT = "    wgmma_wait(0)\n" + DEFERRED_RELEASE
DEFERRED_BEFORE_WAIT = DEFERRED_RELEASE + "    wgmma_wait(0)\n"


def _kernel(old: str | None, new: str, **constants):
    src = PATH.read_text()
    if old is not None:
        assert src.count(old) == 1, f"attention.py changed: {old!r}; update this test"
        src = src.replace(old, new)
    for name, value in constants.items():
        src = src.replace(f"\n{name} = ", f"\n{name} = {value!r}  # ", 1)
    return parse_source(src, str(PATH))["attention_bhsd"]


def _line_of(text: str) -> int:
    src = PATH.read_text()
    return src[:src.index(text)].count("\n") + 1


def test_the_shipped_release_verifies():
    assert driver.run(_kernel(None, "")).verdict == "verified"
    assert driver.run(_kernel(None, "", DEFER=0)).verdict == "verified"


def test_release_before_the_pv_wgmma_retires_is_caught():
    report = driver.run(_kernel(RELEASE_AFTER_WAIT, RELEASE_BEFORE_WAIT, DEFER=0))
    found = [f for f in report.findings if f.check == "protocol.stage-reuse"]
    assert report.verdict == "failed" and found, [str(f) for f in report.findings]
    assert "v_s" in found[0].message and "in flight" in found[0].message
    # the arrive, which now sits one line above where the wait was
    assert found[0].loc.line == _line_of(RELEASE_AFTER_WAIT) + 1


def test_deferred_release_before_its_wait_is_caught():
    """DEFER = 1 releases block j - 1's stage in step j: before the wait that retires its
    P V wgmma, the previous step's wgmma may still read V."""
    report = driver.run(_kernel(DEFERRED_AFTER_WAIT, DEFERRED_BEFORE_WAIT))
    found = [f for f in report.findings if f.check == "protocol.stage-reuse"]
    assert report.verdict == "failed" and found, [str(f) for f in report.findings]
    assert "previous step" in found[0].message and "v_s" in found[0].message


def test_the_interpreter_shows_the_early_release_race():
    kernel = _kernel(RELEASE_AFTER_WAIT, RELEASE_BEFORE_WAIT, BN=64, DEFER=0)
    rng = np.random.default_rng(3)
    sq, sk, d = 64, 320, 64                  # five key blocks through a two-stage ring
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for n in (sq, sk, sk))
    bad = 0
    for seed in range(4):
        res = interpret(kernel, {"Q": q, "K": k, "V": v,
                                 "O": np.full((sq, d), np.nan, np.float32),
                                 "L": np.full(sq, np.nan, np.float32), "SQ": sq, "SK": sk},
                        seed=seed, blocks=[0])
        bad += not res.ok
    assert bad == 4
