"""argus.ops.matmul's argument checks and its choice of kernel and configuration (CPU: the
checks come before any launch)."""

import pytest

torch = pytest.importorskip("torch")

from argus.ops import matmul  # noqa: E402
from argus.ops.gemm_configs import config_for, knobs_to_config  # noqa: E402
from argus.runtime.launch_errors import LaunchError  # noqa: E402


def t(*shape, dtype=torch.bfloat16):
    return torch.zeros(shape, dtype=dtype)


@pytest.mark.parametrize("a, b, message", [
    (t(4, 8), t(16, 8), "shapes do not chain"),
    (t(4, 8), t(8, 8, dtype=torch.float16), "bf16 or fp16 operands of one dtype"),
    (t(4, 8, dtype=torch.float32), t(8, 8, dtype=torch.float32), "bf16 or fp16"),
    (t(8, 4).t(), t(8, 8), "a must have contiguous rows"),
    (t(4, 8), t(8, 16)[:, ::2], "b must be K x N with contiguous rows or the transpose"),
    (t(4), t(4, 8), "unsqueeze"),
])
def test_bad_arguments(a, b, message):
    with pytest.raises(LaunchError, match=message):
        matmul(a, b)


def test_bad_knobs_are_refused_by_name():
    with pytest.raises(LaunchError, match="BM=256 .one of 64, 128.*split_k=5"):
        knobs_to_config({"BM": 256, "split_k": 5}, "kn", 4096, 4096, 4096)
    with pytest.raises(LaunchError, match="split_k with epilogue='smem_tma'"):
        knobs_to_config({"split_k": 2, "epilogue": "smem_tma"}, "kn", 256, 8192, 8192)
    with pytest.raises(LaunchError, match="BN=40 .a multiple of 16"):
        knobs_to_config({"BN": 40}, "kn", 4096, 4096, 4096)
    with pytest.raises(LaunchError, match="exceed the 227 KB"):
        knobs_to_config({"stages": 8}, "kn", 4096, 4096, 4096)


def test_knobs_become_kernel_constants():
    cfg = knobs_to_config({"BN": 128, "stages": 6, "group": 4, "BM": 128}, "nk", 64, 64, 64)
    assert (cfg["BN"], cfg["S"], cfg["GROUP"], cfg["ACC"]) == (128, 6, 4, "wgmma_acc_m64n128")


@pytest.mark.parametrize("shape, layout, bn", [((8192, 8192, 8192), "kn", 256),
                                               ((256, 8192, 8192), "nk", 128),
                                               ((256, 8192, 8192), "kn", 128),   # tuned
                                               # the model: 129 tiles of 128x192 fill one wave
                                               ((264, 8192, 8192), "kn", 192),
                                               ((128, 4096, 4096), "kn", 64)])
def test_tile_width_follows_the_measured_table(shape, layout, bn):
    assert config_for(*shape, layout)["BN"] == bn


def test_smem_epilogue_knob_picks_three_stages_and_counts_its_tile():
    cfg = knobs_to_config({"epilogue": "smem_tma"}, "kn", 4096, 4096, 4096)
    assert (cfg["EPILOGUE"], cfg["S"]) == ("smem_tma", 3)
    with pytest.raises(LaunchError, match="65536 B epilogue tile exceed"):
        knobs_to_config({"epilogue": "smem_tma", "stages": 4}, "kn", 4096, 4096, 4096)
    with pytest.raises(LaunchError, match="epilogue='tmem'"):
        knobs_to_config({"epilogue": "tmem"}, "kn", 4096, 4096, 4096)


def test_split_k_knob():
    assert knobs_to_config({"split_k": 4}, "kn", 128, 4096, 4096)["SPLIT"] == 4
    assert "SPLIT" not in knobs_to_config({"split_k": 1}, "kn", 128, 4096, 4096)


def test_the_keyed_launch_tells_apart_what_changes_the_parameters(monkeypatch):
    """matmul_into's launch key (launch_keyed) differs for another address, row pitch, B
    layout or output, and is the same for a call on the same tensors; the tensors handed
    over on a new key are a, B as stored (N x K for x @ W.T) and the output."""
    import importlib
    mm = importlib.import_module("argus.ops.matmul")
    keys, handed = [], []

    class Launcher:
        def launch_keyed(self, key, tensors):
            keys.append(key)
            handed.append(tensors())

    monkeypatch.setattr(mm, "library_kernel", lambda *a, **k: Launcher())
    mm._chosen.clear()
    a, out = t(64, 96), t(64, 128)
    b, wide = t(96, 128), t(96, 192)
    w = t(128, 96)
    for x, y in [(a, b), (a, b), (t(64, 96), b), (a, wide[:, :128]), (a, w.t())]:
        mm.matmul_into(x, y, out, {})
    mm.matmul_into(a, b, None, {})
    assert keys[0] == keys[1] and len(set(keys)) == 5
    assert handed[4][1].shape == (128, 96) and handed[4][1].is_contiguous()
    assert handed[5][2].shape == (64, 128) and handed[5][2].is_contiguous()


@pytest.mark.parametrize("m, n", [(1, 1), (1, 8), (8, 1), (200, 264)])
def test_a_new_output_is_contiguous(m, n):
    import importlib
    mm = importlib.import_module("argus.ops.matmul")
    a = t(m, 16, dtype=torch.float16)
    got = mm._new_output(a, m, n)
    assert got.shape == (m, n) and got.dtype == a.dtype and got.is_contiguous()
    assert got.data_ptr() != mm._new_output(a, m, n).data_ptr()      # a fresh tensor each call
