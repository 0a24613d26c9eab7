"""The library kernels written with @helper functions (argus/kernels/gemm.py: the ring, the
producer and the block epilogue; gemm_splitk.py: the ring, the producer and the consumer)
are the kernels they were before them. For every variant argus.ops builds (both B layouts x
clusters of 1, 2 and 4 blocks x 1 or 2 consumer warpgroups x BN 64, 128, 256 x the three
epilogues x bf16 / fp16, each with its ring depth; the configurations matmul picks for
issue 6's shapes; split-K for SPLIT 1 to 8), the printed IR equals that of the flat copy
kept in tests/kernels/flat/ (every kernel written out, no helper) and so does the generated
CUDA, apart from source locations; and the ops of a helper carry the helper's lines.

A deliberate change to a library kernel makes the same change to its flat copy (or, once
the helpers are trusted, retires this file)."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

from argus.frontend import parse_source
from argus.ir import format_kernel
from argus.ops.gemm_configs import config_for, deepest_ring, stages_for
from argus.ops.library import KERNEL_DIR

FLAT = Path(__file__).resolve().parent / "flat"
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 12288, 4096), (4096, 28672, 4096),
          (4096, 4096, 14336), (16384, 8192, 2048), (256, 8192, 8192), (128, 4096, 4096),
          (1000, 1032, 520), (1, 8, 8), (128, 256, 8192), (64, 512, 16384)]


def gemm_overrides(cm: int, wg: int, bn: int, epilogue: str, dt: str) -> dict:
    """The module constants of one gemm.py variant, as argus.ops specialises it (the ring
    depth of tests/verify/test_library_variants.py)."""
    if epilogue == "tma_chunks":
        stages = deepest_ring((64 * wg + bn) * 64 * 2, 2 * 64 * wg * 64 * 2)
    else:
        stages = stages_for(bn, 64, 64 * wg * bn * 2 if epilogue == "smem_tma" else 0, 64 * wg)
    return {"CM": cm, "WG": wg, "CONSUMERS": (1,) if wg == 1 else (1, 2), "BN": bn,
            "ACC": f"wgmma_acc_m64n{bn}", "S": stages, "EPILOGUE": epilogue, "DT": dt}


def variants() -> list[tuple[str, str, dict]]:
    out = [("gemm", name, {}) for name in ("gemm_nt", "gemm_nn")]
    out += [("gemm", name, gemm_overrides(cm, wg, bn, ep, dt))
            for name in ("gemm_nt", "gemm_nn") for cm in (1, 2, 4) for wg in (1, 2)
            for bn in (64, 128, 256) for ep in ("direct", "smem_tma", "tma_chunks")
            for dt in ("bf16", "fp16") if not (ep == "tma_chunks" and bn % 128)]
    out += [("gemm", name, {"CM": 8, "BLOCKS": 128}) for name in ("gemm_nt", "gemm_nn")]
    for layout, name in (("kn", "gemm_nn"), ("nk", "gemm_nt")):
        for shape in SHAPES:
            cfg = config_for(*shape, layout)
            out.append(("gemm_splitk", name + "_splitk", cfg) if cfg.get("SPLIT")
                       else ("gemm", name, cfg))
    out += [("gemm_splitk", name, {"SPLIT": split, "BN": bn, "ACC": f"wgmma_acc_m64n{bn}",
                                   "S": {64: 8, 128: 6, 256: 4}[bn], "DT": dt})
            for name in ("gemm_nt_splitk", "gemm_nn_splitk") for split in (1, 2, 3, 4, 8)
            for bn in (64, 128, 256) for dt in ("bf16", "fp16")]
    out += [("gemm_splitk", name, {}) for name in ("gemm_nt_splitk", "gemm_nn_splitk")]
    return out


VARIANTS = variants()


@lru_cache(maxsize=None)
def _parsed(module: str, flat: bool, overrides: tuple) -> dict:
    path = KERNEL_DIR / f"{module}.py"
    text = (FLAT if flat else KERNEL_DIR).joinpath(f"{module}.py").read_text()
    return parse_source(text, str(path), dict(overrides))   # the same file name for both


def kernels(module: str, name: str, overrides: dict):
    key = tuple(sorted(overrides.items()))
    return _parsed(module, False, key)[name], _parsed(module, True, key)[name]


LOC = re.compile(r"(\w+\.py):\d+")
LINE_COMMENT = re.compile(r"^[ \t]*// \w+\.py:\d+: .*\n", re.M)


def _without_locations(cuda: str) -> str:
    return LOC.sub(r"\1:LINE", LINE_COMMENT.sub("", cuda))


def test_the_variants_cover_every_knob():
    gemm = [o for m, _, o in VARIANTS if m == "gemm"]
    assert {o.get("EPILOGUE") for o in gemm} >= {"direct", "smem_tma", "tma_chunks"}
    assert {o.get("CM") for o in gemm} >= {1, 2, 4, 8} and {o.get("WG") for o in gemm} >= {1, 2}
    assert {o.get("S") for o in gemm} >= {3, 4, 5, 6, 8, 9, 12}
    assert {o.get("SPLIT") for m, _, o in VARIANTS if m == "gemm_splitk"} >= {1, 2, 3, 4, 8}
    assert len(VARIANTS) > 250


@pytest.mark.parametrize("module,name,overrides", VARIANTS,
                         ids=[f"{n}-" + "-".join(f"{k}{v}" for k, v in sorted(o.items())
                                                 if k not in ("ACC", "CONSUMERS"))
                              for _, n, o in VARIANTS])
def test_the_ir_is_the_flat_kernels(module, name, overrides):
    ours, flat = kernels(module, name, overrides)
    assert format_kernel(ours) == format_kernel(flat)


@pytest.mark.parametrize("module,name,overrides", VARIANTS[::7],
                         ids=[f"{n}-{i * 7}" for i, (_, n, _) in enumerate(VARIANTS[::7])])
def test_the_generated_cuda_differs_only_in_source_locations(module, name, overrides):
    from argus.codegen import generate
    ours, flat = kernels(module, name, overrides)
    a, b = generate(ours).source, generate(flat).source
    assert _without_locations(a) == _without_locations(b)
    assert a != b          # the line comments do name the helpers' lines


def _helper_lines(module: str) -> dict[str, range]:
    tree = ast.parse((KERNEL_DIR / f"{module}.py").read_text())
    return {fn.name: range(fn.lineno, fn.end_lineno + 1) for fn in tree.body
            if isinstance(fn, ast.FunctionDef)
            and any(ast.unparse(d) == "helper" for d in fn.decorator_list)}


@pytest.mark.parametrize("module,name,overrides,helper,opcode", [
    ("gemm", "gemm_nt", {}, "producer", "tma.load"),
    ("gemm", "gemm_nn", {"CM": 2}, "producer", "tma.load"),
    ("gemm", "gemm_nt", {}, "ring_barriers", "mbarrier.init"),
    ("gemm", "gemm_nn", {"EPILOGUE": "tma_chunks", "S": 4}, "store_in_blocks", "tma.store"),
    ("gemm_splitk", "gemm_nn_splitk", {}, "consumer", "atomic.add"),
    ("gemm_splitk", "gemm_nn_splitk", {}, "consumer", "wgmma.mma"),
    ("gemm_splitk", "gemm_nt_splitk", {}, "producer", "mbarrier.expect_tx"),
])
def test_the_ops_of_a_helper_carry_its_lines(module, name, overrides, helper, opcode):
    ours, _ = kernels(module, name, overrides)
    lines = _helper_lines(module)
    assert set(lines) >= {helper}
    found = [op for op in ours.walk() if op.opcode == opcode]
    assert found and all(op.loc.line in lines[helper] for op in found)
