"""The shape table and the knob translation of argus/ops/gemm_configs.py: every config it
hands out fits in shared memory (a 4-stage ring at BN=256 next to an epilogue tile does
not, which is how the H200 run of 2026-12-02 found the split_k + BN=128 case failing),
the tuned table wins over the heuristic for exactly its shapes, and knobs given by the
caller win over both."""

import itertools
import json

import pytest

from argus.ops import gemm_configs
from argus.ops.gemm_configs import config_for, knobs_to_config, stages_for
from argus.runtime.launch_errors import LaunchError

SMEM_LIMIT = 227 * 1024


def smem_bytes(cfg):
    bk, bm = cfg.get("BK", 64), 64 * cfg.get("WG", 2)
    ring = cfg["S"] * (bm + cfg["BN"]) * bk * 2
    tile = {"smem_tma": bm * cfg["BN"] * 2, "tma_chunks": 2 * bm * 64 * 2}.get(
        cfg.get("EPILOGUE"), 0)
    return ring + tile + 1024 + 16 * cfg["S"]


def test_stages_for_the_table_widths():
    assert [stages_for(bn) for bn in (256, 128, 64)] == [4, 6, 9]
    assert stages_for(256, epilogue_bytes=128 * 256 * 2) == 3
    assert stages_for(256, bk=128) == 2
    assert stages_for(64, bm=64) == 12          # the cap: 13 would fit


@pytest.mark.parametrize("bm,bn,bk,epilogue,split", itertools.product(
    (64, 128), (64, 128, 192, 256), (64, 128), ("direct", "smem_tma"), (1, 4)))
def test_knobs_without_stages_always_fit(bm, bn, bk, epilogue, split):
    knobs = {"BM": bm, "BN": bn, "BK": bk, "epilogue": epilogue, "split_k": split}
    if split > 1 and epilogue == "smem_tma":   # split-K runs with BM = 64 too
        with pytest.raises(LaunchError, match="split_k with"):
            knobs_to_config(knobs, "kn", 200, 264, 136)
        return
    tile = bm * bn * 2 if epilogue == "smem_tma" else 0
    if (220 * 1024 - tile) // ((bm + bn) * bk * 2) < 2:      # not even a 2-stage ring fits
        with pytest.raises(LaunchError, match="exceed the 227 KB"):
            knobs_to_config(knobs, "kn", 200, 264, 136)
        return
    cfg = knobs_to_config(knobs, "kn", 200, 264, 136)
    assert cfg["BN"] == bn and cfg.get("BK", 64) == bk and 64 * cfg.get("WG", 2) == bm
    assert cfg.get("CONSUMERS", (1, 2)) == tuple(range(1, 1 + bm // 64))
    assert smem_bytes(cfg) <= SMEM_LIMIT
    assert cfg["S"] == stages_for(bn, bk, tile, bm)


def test_explicit_stages_that_do_not_fit_are_refused():
    with pytest.raises(LaunchError, match="exceed the 227 KB"):
        knobs_to_config({"BN": 256, "stages": 6}, "kn", 4096, 4096, 4096)


def test_shape_table_fits():
    for m, n, k in [(8192, 8192, 8192), (256, 8192, 8192), (128, 4096, 4096), (1, 8, 8)]:
        for layout in ("kn", "nk"):
            assert smem_bytes(config_for(m, n, k, layout)) <= SMEM_LIMIT


def test_tuned_table_wins_for_its_shapes_only(tmp_path, monkeypatch):
    table = tmp_path / "tuned.json"
    table.write_text(json.dumps({"shapes": {"kn": {"128x4096x4096": {
        "BM": 64, "BN": 64, "cluster_m": 2}}}}))
    monkeypatch.setenv("ARGUS_GEMM_TUNED", str(table))
    gemm_configs._tuned_table.cache_clear()
    cfg = config_for(128, 4096, 4096, "kn")
    assert (cfg["WG"], cfg["CONSUMERS"], cfg["CM"], cfg["BN"]) == (1, (1,), 2, 64)
    assert "CM" not in config_for(128, 4096, 4096, "nk")      # other layout: heuristic
    assert "CM" not in config_for(128, 4096, 4104, "kn")      # other shape: heuristic
    # a caller's knobs replace the tuned choice; what they leave out is the heuristic's
    cfg = knobs_to_config({"split_k": 4}, "kn", 128, 4096, 4096)
    model = gemm_configs.heuristic_knobs(128, 4096, 4096, "kn")
    assert cfg["SPLIT"] == 4 and "CM" not in cfg and cfg["BN"] == model["BN"]
    assert cfg.get("WG", 2) == model["BM"] // 64
    gemm_configs._tuned_table.cache_clear()


def test_committed_tuned_table_is_valid():
    """Every entry of argus/ops/gemm_tuned.json is a configuration the kernels accept."""
    if not gemm_configs.TUNED_FILE.exists():
        pytest.skip("no tuned table committed")
    shapes = json.loads(gemm_configs.TUNED_FILE.read_text())["shapes"]
    for layout, entries in shapes.items():
        for key, knobs in entries.items():
            m, n, k = (int(v) for v in key.split("x"))
            assert smem_bytes(knobs_to_config(knobs, layout, m, n, k)) <= SMEM_LIMIT
