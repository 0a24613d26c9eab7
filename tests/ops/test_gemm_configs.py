"""The shape table and the knob translation of argus/ops/gemm_configs.py: every config it
hands out fits in shared memory (a 4-stage ring at BN=256 next to an epilogue tile does
not, which is how the H200 run of 2026-12-02 found the split_k + BN=128 case failing)."""

import itertools

import pytest

from argus.ops.gemm_configs import config_for, knobs_to_config, stages_for
from argus.runtime.launch_errors import LaunchError

SMEM_LIMIT = 227 * 1024


def smem_bytes(cfg):
    bk = cfg.get("BK", 64)
    ring = cfg["S"] * (128 + cfg["BN"]) * bk * 2
    tile = 128 * cfg["BN"] * 2 if cfg.get("EPILOGUE") == "smem_tma" else 0
    return ring + tile + 1024 + 16 * cfg["S"]


def test_stages_for_the_table_widths():
    assert [stages_for(bn) for bn in (256, 128, 64)] == [4, 6, 8]
    assert stages_for(256, epilogue_bytes=128 * 256 * 2) == 3
    assert stages_for(256, bk=128) == 2


@pytest.mark.parametrize("bn,bk,epilogue,split", itertools.product(
    (64, 128, 192, 256), (64, 128), ("direct", "smem_tma"), (1, 4)))
def test_knobs_without_stages_always_fit(bn, bk, epilogue, split):
    knobs = {"BN": bn, "BK": bk, "epilogue": epilogue, "split_k": split}
    if epilogue == "smem_tma" and split > 1:
        with pytest.raises(LaunchError, match="split_k with epilogue"):
            knobs_to_config(knobs, "kn", 200, 264, 136)
        return
    tile = 128 * bn * 2 if epilogue == "smem_tma" else 0
    if (220 * 1024 - tile) // ((128 + bn) * bk * 2) < 2:      # not even a 2-stage ring fits
        with pytest.raises(LaunchError, match="exceed the 227 KB"):
            knobs_to_config(knobs, "kn", 200, 264, 136)
        return
    cfg = knobs_to_config(knobs, "kn", 200, 264, 136)
    assert cfg["BN"] == bn and cfg.get("BK", 64) == bk
    assert smem_bytes(cfg) <= SMEM_LIMIT
    assert cfg["S"] == stages_for(bn, bk, tile)


def test_explicit_stages_that_do_not_fit_are_refused():
    with pytest.raises(LaunchError, match="exceed the 227 KB"):
        knobs_to_config({"BN": 256, "stages": 6}, "kn", 4096, 4096, 4096)


def test_shape_table_fits():
    for m, n, k in [(8192, 8192, 8192), (256, 8192, 8192), (128, 4096, 4096), (1, 8, 8)]:
        for layout in ("kn", "nk"):
            assert smem_bytes(config_for(m, n, k, layout)) <= SMEM_LIMIT
