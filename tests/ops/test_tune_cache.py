"""The autotuning cache file (argus/ops/tune_cache.py): keys by GPU, dtype, layout and shape
class, round trips, merging with other writers, and a damaged file."""

import json

import pytest

from argus.ops.tune_cache import TuneCache, default_path, entry_key, m_bucket, shape_class


@pytest.mark.parametrize("m, bucket", [(1, 1), (2, 2), (3, 4), (64, 64), (65, 128),
                                       (4096, 4096), (16383, 16384)])
def test_rows_round_up_to_a_power_of_two(m, bucket):
    assert m_bucket(m) == bucket


def test_a_key_names_gpu_op_dtype_layout_and_class():
    assert entry_key("NVIDIA H200", "bf16", "nk", 100, 4096, 14336) == \
        "NVIDIA H200|gemm|bf16|nk|m128-n4096-k14336"
    assert shape_class(65, 8, 8) == shape_class(128, 8, 8) != shape_class(129, 8, 8)
    with pytest.raises(ValueError):
        entry_key("NVIDIA H200", "fp32", "kn", 1, 8, 8)


def test_the_file_lives_under_the_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))
    assert default_path() == tmp_path / "autotune" / "gemm.json"


def test_recorded_knobs_read_back_in_a_fresh_reader(tmp_path):
    path = tmp_path / "gemm.json"
    TuneCache(path).record("g|gemm|bf16|kn|m1-n8-k8", {"BN": 64, "split_k": 4}, 0.012, "test")
    fresh = TuneCache(path)
    assert fresh.knobs("g|gemm|bf16|kn|m1-n8-k8") == {"BN": 64, "split_k": 4}
    assert fresh.knobs("g|gemm|bf16|kn|m2-n8-k8") is None
    entry = json.loads(path.read_text())["entries"]["g|gemm|bf16|kn|m1-n8-k8"]
    assert (entry["time_ms"], entry["source"]) == (0.012, "test") and entry["measured"]


def test_a_write_keeps_what_another_process_wrote_meanwhile(tmp_path):
    path = tmp_path / "gemm.json"
    mine, theirs = TuneCache(path), TuneCache(path)
    mine.entries()                                    # read before the other write
    theirs.record("a", {"BN": 128}, 1.0, "other")
    mine.record("b", {"BN": 64}, 2.0, "me")
    both = TuneCache(path)
    assert both.knobs("a") == {"BN": 128} and both.knobs("b") == {"BN": 64}


@pytest.mark.parametrize("text", ["{not json", '{"format": 99, "entries": {}}', "[]",
                                  '{"format": 1, "entries": {"k": {"knobs": 3}}}'])
def test_a_damaged_file_reads_empty_and_is_replaced(tmp_path, text):
    path = tmp_path / "gemm.json"
    path.write_text(text)
    assert TuneCache(path).knobs("k") is None
    TuneCache(path).record("k", {"BN": 64}, None, "test")
    assert TuneCache(path).knobs("k") == {"BN": 64}
