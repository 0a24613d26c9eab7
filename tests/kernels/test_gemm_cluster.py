"""The library GEMM on 2-block clusters (CM=2: the B tile shared by two M tiles, each block
loading half of it and multicasting it into both): correct on the interpreter in both
modes with tails in M, N and K, several cluster tiles per cluster, a cluster whose second
block has no rows of A at all, with either epilogue; its CUDA uses the multicast copy, the
remote arrive and the cluster walk; its binary is clean."""

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from argus.interp.machine.dtypes import BF16
from argus.ops.library import kernel_ir

SMALL = {"BN": 64, "ACC": "wgmma_acc_m64n64", "S": 3}


def _bf16(rng, shape):
    return BF16.decode(BF16.encode(rng.standard_normal(shape).astype(np.float32)))


def _run(name, m, n, k, mode, seed, **overrides):
    ir = kernel_ir("gemm", name, CM=2, **overrides)
    rng = np.random.default_rng(seed)
    a = _bf16(rng, (m, k))
    b = _bf16(rng, (k, n) if name == "gemm_nn" else (n, k))
    res = interpret(ir, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)},
                    seed=seed, mode=mode)
    assert res.ok, res.failures()
    got = np.asarray(res.outputs["C"], np.float64)
    ref = a.astype(np.float64) @ (b.astype(np.float64) if name == "gemm_nn"
                                  else b.astype(np.float64).T)
    assert np.isfinite(got).all()
    assert np.abs(got - ref).max() <= 2 ** -7 * np.abs(ref).max()


@pytest.mark.parametrize("epilogue", ["direct", "smem_tma"])
@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_two_clusters_many_tiles_with_tails(name, epilogue, mode):
    # 392 rows: 4 M tiles = 2 cluster rows, the last one 8 rows deep; 136 columns: 3 N
    # tiles; K = 200: a partial last k-step; 2 clusters walk the 6 cluster tiles
    _run(name, 392, 136, 200, mode, seed=3, BLOCKS=4, EPILOGUE=epilogue, **SMALL)


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_second_block_of_a_cluster_without_rows(name):
    # M = 100: one M tile; the cluster's second block loads an A box wholly outside A
    # (TMA zero fill), still multicasts its half of B, and stores nothing
    _run(name, 100, 72, 64, "value", seed=4, BLOCKS=2, **SMALL)


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_cuda_uses_multicast_remote_arrive_and_the_cluster_walk(name):
    from argus.codegen import generate

    gen = generate(kernel_ir("gemm", name, CM=2))
    assert gen.cluster == (2, 1, 1)
    src = gen.source
    assert "argus::tma_load_multicast<2>" in src and "(argus::u16)(3)" in src
    assert src.count("argus::mbarrier_arrive_remote(") == 2   # two sites, a loop over ranks
    assert "argus::cluster_linear_id()" in src and "argus::cluster_count()" in src
    assert src.count("argus::cluster_arrive();") == 2          # after init, before exit
    assert "argus::mbarrier_init((empty + 8 * (s)), 4)" in src


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_binary_is_clean(name):
    from argus.codegen import generate
    from argus.runtime import BuildOptions, build_kernel, check_kernel_binary
    from argus.runtime.toolchain import find_tool, nvrtc_identity
    if find_tool("nvcc") is None and nvrtc_identity() is None:
        pytest.skip("no CUDA compiler")
    if not (find_tool("cuobjdump") or find_tool("nvdisasm")):
        pytest.skip("no disassembler")
    gen = generate(kernel_ir("gemm", name, CM=2))
    entry = build_kernel(gen.source, BuildOptions())
    assert check_kernel_binary(entry, {
        "kernel": gen.name, "max_registers": 168,
        "role_registers": {"producer": 40, "consumer": 232},
        "instructions": ["HGMMA", "UTMALDG", "SYNCS"]}) == []
    sass = entry.sass().text if hasattr(entry.sass(), "text") else str(entry.sass())
    assert "MULTICAST" in sass.upper()
