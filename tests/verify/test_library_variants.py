"""Every variant of the library GEMM that argus.ops can run verifies with no finding at all
(no error, no warning): both B layouts x CM (1: single blocks, 2: 2-block clusters with
B multicast) x WG (1 or 2 consumer warpgroups) x BN (64, 128, 256) x EPILOGUE (direct
from registers, through shared memory and a TMA store, or the same in 64-column blocks
through two buffers, BN 128 and 256), each with the ring depth argus.ops gives it
(gemm_configs.stages_for and deepest_ring: 3 to 12 stages, most not a power of two),
and every configuration argus.ops picks for issue 6's shapes (the tuned table and the
heuristic). How long each takes is benchmarks/check_speed.py's job (--variants)."""

from __future__ import annotations

import pytest

from argus.ops.gemm_configs import config_for, deepest_ring, stages_for
from argus.ops.library import kernel_ir
from argus.verify import verify

NAMES = ("gemm_nt", "gemm_nn")
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 12288, 4096), (4096, 28672, 4096),
          (4096, 4096, 14336), (16384, 8192, 2048), (256, 8192, 8192), (128, 4096, 4096),
          (1000, 1032, 520), (1, 8, 8)]


def overrides(cm: int, wg: int, bn: int, epilogue: str = "direct") -> dict:
    """The module constants of one variant, as argus.ops specialises gemm.py (the
    epilogue tile of BM x BN takes shared memory from the ring)."""
    if epilogue == "tma_chunks":
        stages = deepest_ring((64 * wg + bn) * 64 * 2, 2 * 64 * wg * 64 * 2)
    else:
        stages = stages_for(bn, 64, 64 * wg * bn * 2 if epilogue == "smem_tma" else 0, 64 * wg)
    return {"CM": cm, "WG": wg, "CONSUMERS": (1,) if wg == 1 else (1, 2), "BN": bn,
            "ACC": f"wgmma_acc_m64n{bn}", "S": stages, "EPILOGUE": epilogue}


GRID = [(name, cm, wg, bn, ep) for name in NAMES for cm in (1, 2) for wg in (1, 2)
        for bn in (64, 128, 256) for ep in ("direct", "smem_tma", "tma_chunks")
        if not (ep == "tma_chunks" and bn % 128)]


def shipped() -> list[tuple[str, dict]]:
    """The configurations argus.ops.matmul picks for issue 6's shapes (and two with
    tails), both B layouts; split-K runs gemm_splitk.py, not this kernel."""
    seen = {}
    for layout, name in (("kn", "gemm_nn"), ("nk", "gemm_nt")):
        for shape in SHAPES:
            cfg = config_for(*shape, layout)
            if cfg.get("SPLIT"):
                continue
            cfg.pop("BLOCKS")
            seen.setdefault((name, tuple(sorted(cfg.items()))), cfg)
    return [(name, cfg) for (name, _), cfg in seen.items()]


SHIPPED = shipped()


@pytest.mark.parametrize("name,cm,wg,bn,epilogue", GRID,
                         ids=[f"{n}-CM{c}-WG{w}-BN{b}-{e}" for n, c, w, b, e in GRID])
def test_variant_verifies_with_no_finding(name, cm, wg, bn, epilogue):
    findings = verify(kernel_ir("gemm", name, **overrides(cm, wg, bn, epilogue)))
    assert [str(f) for f in findings] == []


def test_the_grid_covers_the_clustered_and_the_deep_rings():
    depths = {overrides(cm, wg, bn, ep)["S"] for _, cm, wg, bn, ep in GRID}
    assert {3, 4, 5, 6, 8, 9, 12} <= depths    # rings of 3, 5, 9 and 12 stages included
    assert any(cfg.get("CM") == 2 and cfg.get("WG") == 1 for _, cfg in SHIPPED)
    assert any(cfg.get("EPILOGUE") == "tma_chunks" for _, cfg in SHIPPED)


@pytest.mark.parametrize("name,cfg", SHIPPED,
                         ids=[f"{n}-" + "-".join(f"{k}{v}" for k, v in sorted(c.items())
                                                 if k not in ("ACC", "CONSUMERS"))
                              for n, c in SHIPPED])
def test_shipped_configuration_verifies_with_no_finding(name, cfg):
    assert [str(f) for f in verify(kernel_ir("gemm", name, **cfg))] == []
