"""The results record has the documented fields; the roofline flag fires when it should."""
import datetime as dt
import json

import pytest

from argus.bench.evaluate import evaluate
from argus.bench.problems import matmul
from argus.bench.results import REQUIRED_FIELDS, build_record, write_record
from argus.bench.roofline import bound_seconds, plausibility, PEAKS
from argus.bench.timing import TimingConfig
from conftest import FakeFlusher, honest


def _timing(cand_ms, peer_ms):
    stats = lambda ms: {"median_ms": ms, "p10_ms": ms * 0.9, "p90_ms": ms * 1.1}
    return {"candidate": stats(cand_ms), "peer": stats(peer_ms), "ratio": peer_ms / cand_ms}


def test_record_has_documented_fields_and_is_written(tmp_path, fp32_problem):
    ev = evaluate(fp32_problem, honest, checks=2, timing=TimingConfig())
    rec = build_record("gemm-test", fp32_problem, ev, device="cpu",
                       now=dt.datetime(2026, 12, 2, 12, 0, 5, tzinfo=dt.timezone.utc))
    for field in REQUIRED_FIELDS:
        assert field in rec
    for field in ("device_name", "torch", "cuda_runtime", "driver"):
        assert field in rec["environment"]
    assert rec["problem"]["m"] == 48 and rec["problem"]["dtype"] == "float32"
    assert "commit" in rec["git"] and "harness_uncommitted" in rec["git"]
    assert rec["performance"] is None and rec["status"] == "ok"
    path = write_record(rec, str(tmp_path))
    assert path.endswith("gemm-test-20261202-120005.json")
    assert json.load(open(path))["checks"][0]["passed"]


def test_write_refuses_an_incomplete_record(tmp_path):
    with pytest.raises(ValueError, match="lacks fields"):
        write_record({"name": "x"}, str(tmp_path))


def test_performance_fields_from_timing(fp32_problem):
    p = matmul(4096, 4096, 4096, "bfloat16")
    ev = {"status": "ok", "timing": _timing(0.2, 0.22), "checks": []}
    rec = build_record("t", p, ev, device="cpu")
    perf = rec["performance"]
    assert perf["candidate"]["tflops"] == pytest.approx(2 * 4096 ** 3 / 0.2e-3 / 1e12)
    assert perf["ratio_to_peer"] == pytest.approx(1.1)
    assert perf["candidate"]["p90_ms"] == pytest.approx(0.22)


def test_roofline_bound_on_known_numbers():
    b = bound_seconds(989e12, 4.8e12 * 0.5, "bfloat16", PEAKS["H200"])
    assert b["compute_s"] == pytest.approx(1.0) and b["memory_s"] == pytest.approx(0.5)
    assert b["bound_by"] == "compute"


def test_faster_than_the_roofline_is_flagged():
    flops, nbytes = 2 * 4096 ** 3, 3 * 4096 * 4096 * 2
    floor = flops / 989e12  # ~0.139 ms
    fine = plausibility(floor / 0.7, flops, nbytes, "bfloat16", "NVIDIA H200", 1.1)
    assert fine["flag"] is None and fine["roofline_fraction"] == pytest.approx(0.7)
    fast = plausibility(floor / 0.97, flops, nbytes, "bfloat16", "NVIDIA H200", 1.1)
    assert fast["flag"] == "implausible, re-verify"


def test_more_than_twice_the_peer_is_flagged_even_on_an_unknown_device():
    rec = plausibility(1.0, 1.0, 1.0, "bfloat16", "Some GPU", 2.5)
    assert rec["flag"] == "implausible, re-verify" and "no peak table" in rec["note"]


def test_an_implausible_ok_result_is_marked_in_the_status():
    p = matmul(4096, 4096, 4096, "bfloat16")
    ev = {"status": "ok", "timing": _timing(0.1, 0.5), "checks": []}
    rec = build_record("t", p, ev, device="cpu")
    assert rec["status"] == "implausible"
    assert rec["performance"]["plausibility"]["flag_reasons"]
