"""A tensor the generated code reaches only through TMA tensor maps (which carry the row
pitch) may be passed as a row-strided view; one whose pointer the code dereferences must be
contiguous. The codegen marks each pointer parameter with whether its code names it, and the
launcher's argument check reads that mark (no GPU needed: the launcher loads its module
only on the first launch)."""

import pytest

torch = pytest.importorskip("torch")

from argus.ops.gemm_configs import knobs_to_config  # noqa: E402
from argus.ops.library import generated  # noqa: E402
from argus.runtime.arguments import bind_arguments  # noqa: E402
from argus.runtime.launch import Launcher  # noqa: E402
from argus.runtime.launch_errors import LaunchError  # noqa: E402

TMA_STORE = {"BM": 128, "BN": 256, "split_k": 1, "cluster_m": 1, "epilogue": "tma_chunks"}
DIRECT = {"BM": 64, "BN": 64, "split_k": 1, "cluster_m": 1, "epilogue": "direct"}


def _gemm(knobs, m=300, n=264, k=200):
    return generated("gemm", "gemm_nn", DT="bf16", **knobs_to_config(knobs, "kn", m, n, k))


def _addressed(gen):
    return {p.source: p.addressed for p in gen.params if p.kind == "pointer"}


def test_a_tma_only_gemm_dereferences_no_pointer():
    assert _addressed(_gemm(TMA_STORE)) == {"A": False, "B": False, "C": False}
    assert Launcher(_gemm(TMA_STORE), b"")._strided == {"A", "B", "C"}


def test_a_direct_store_epilogue_addresses_c():
    gen = _gemm(DIRECT)
    assert _addressed(gen) == {"A": False, "B": False, "C": True}
    assert Launcher(gen, b"")._strided == {"A", "B"}


def test_the_argument_check_takes_strided_views_only_where_the_maps_are():
    gen = _gemm(DIRECT)
    launcher = Launcher(gen, b"")
    a = torch.zeros(300, 256, dtype=torch.bfloat16)[:, :200]      # rows 512 B apart
    b = torch.zeros(200, 264, dtype=torch.bfloat16)
    c_wide = torch.zeros(300, 320, dtype=torch.bfloat16)
    c = torch.zeros(300, 264, dtype=torch.bfloat16)
    bound, _ = bind_arguments(gen.name, launcher._params, [a, b, c], strided=launcher._strided)
    assert bound["A"].stride() == (256, 1)
    with pytest.raises(LaunchError, match="C must be contiguous"):
        bind_arguments(gen.name, launcher._params, [a, b, c_wide[:, :264]],
                       strided=launcher._strided)
