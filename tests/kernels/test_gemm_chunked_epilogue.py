"""The GEMM with its epilogue in 64-column blocks through two shared-memory buffers in turn
(gemm.py with EPILOGUE="tma_chunks"): it leaves room for a fourth stage of the ring at
BN = 256; correct on the interpreter in both modes with one persistent block walking
several tiles with tails; verified without a finding; its binary clean, with constant
register indices (no local memory); and the verifier names each mistake this double buffer
invites at its line."""

import numpy as np
import pytest

from argus.frontend import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine.dtypes import BF16
from argus.ops.gemm_configs import knobs_to_config
from argus.ops.library import KERNEL_DIR, kernel_ir
from argus.verify import verify

SOURCE = (KERNEL_DIR / "gemm.py").read_text()
LAYOUT = {"gemm_nt": "nk", "gemm_nn": "kn"}


def config(name: str, bn: int = 256, **extra) -> dict:
    """The constants argus.ops gives this epilogue (the ring depth included)."""
    cfg = knobs_to_config({"epilogue": "tma_chunks", "BN": bn}, LAYOUT[name], 4096, 4096, 4096)
    cfg.pop("BLOCKS")
    return {**cfg, **extra}


def _bf16(rng, shape):
    return BF16.decode(BF16.encode(rng.standard_normal(shape).astype(np.float32)))


def test_the_chunks_leave_room_for_four_stages_at_bn_256():
    assert config("gemm_nn")["S"] == 4
    assert knobs_to_config({"epilogue": "smem_tma"}, "kn", 4096, 4096, 4096)["S"] == 3


def test_a_width_the_pairs_do_not_divide_is_refused():
    from argus.runtime.launch_errors import LaunchError
    with pytest.raises(LaunchError, match="multiple of 128"):
        knobs_to_config({"epilogue": "tma_chunks", "BN": 192}, "kn", 4096, 4096, 4096)


@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
@pytest.mark.parametrize("bn", [256, 128])
def test_one_block_many_tiles_with_tails(name, bn, mode):
    ir = kernel_ir("gemm", name, **config(name, bn, BLOCKS=1))
    rng = np.random.default_rng(7)
    m, n, k = 300, 520, 200          # 3 x 3 (or 5) tiles, tails in M, N and K
    a = _bf16(rng, (m, k))
    b = _bf16(rng, (n, k) if name == "gemm_nt" else (k, n))
    res = interpret(ir, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)}, seed=5,
                    mode=mode)
    assert res.ok, res.failures()
    got = np.asarray(res.outputs["C"], np.float64)
    ref = a.astype(np.float64) @ (b.T if name == "gemm_nt" else b).astype(np.float64)
    assert np.isfinite(got).all()
    assert np.abs(got - ref).max() <= 2 ** -7 * np.abs(ref).max()


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
@pytest.mark.parametrize("extra", [{}, {"BN": 128}, {"CM": 2}, {"WG": 1, "CONSUMERS": (1,)}],
                         ids=["BN256", "BN128", "cluster", "BM64"])
def test_verifies_with_no_finding(name, extra):
    cfg = config(name, extra.get("BN", 256))
    cfg.update(extra)
    assert [str(f) for f in verify(kernel_ir("gemm", name, **cfg))] == []


FIRST_WAIT = '''        if wg == 0:
            with elect_one():
                tma_store_wait(1)
        named_barrier(1, 128 * WG)
        store(tile(c0[0]'''
C0_STORE = "store(tile(c0[0], (64, 64), (wg, 0)), tile(out, (64, 64), (0, 2 * h)))"
C1_STORE = "store(tile(c1[0], (64, 64), (wg, 0)), tile(out, (64, 64), (0, 2 * h + 1)))"
C1_TMA = "tma_store(tile(C, (BM, 64), (tm, tn * (BN // 64) + 2 * h + 1)),"
BUGS = {
    # (text in gemm.py's helper store_in_blocks, its replacement, the check, the whole line
    # it names, mutated)
    "no wait before c0 is written": (
        FIRST_WAIT, "        named_barrier(1, 128 * WG)\n"
        "        store(tile(c0[0]", "protocol.store-reuse", C0_STORE),
    "a wait that leaves c0's own store in flight": (
        FIRST_WAIT, FIRST_WAIT.replace("tma_store_wait(1)", "tma_store_wait(2)"),
        "protocol.store-reuse", C0_STORE),
    "no wait before c1 is written": (
        "tma_store_commit()\n                tma_store_wait(1)\n",
        "tma_store_commit()\n", "protocol.store-reuse", C1_STORE),
    "c0's store never committed (it joins c1's group)": (
        "c0[0])\n                tma_store_commit()", "c0[0])",
        "protocol.store-reuse", C0_STORE),
    "no fence before c1's store": (
        "(0, 2 * h + 1)))\n        fence_proxy_async()", "(0, 2 * h + 1)))",
        "protocol.proxy-fence", C1_TMA),
    "c1 gets the block c0 had": (
        "tile(out, (64, 64), (0, 2 * h + 1))", "tile(out, (64, 64), (0, 2 * h))",
        "tag.store-coordinate", C1_TMA),
    "c1 stored over c0's columns": (
        "(tm, tn * (BN // 64) + 2 * h + 1)", "(tm, tn * (BN // 64) + 2 * h)",
        "tag.store-coverage", C1_TMA.replace(" + 1)", ")")),
}


def _bug(bug: str):
    old, new, check, at = BUGS[bug]
    assert old in SOURCE, bug
    src = SOURCE.replace(old, new, 1)       # the helper both kernels inline
    return src, check, at


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_mistake_is_named_at_its_line(bug):
    src, check, at = _bug(bug)
    lines = src.splitlines()
    start = src.index("def store_in_blocks(")     # the finding is at the helper's line
    first = src[:start].count("\n")
    want = next(i + 1 for i in range(first, len(lines))
                if lines[i].strip() == at)
    found = verify(parse_source(src, "epilogue_bug.py", config("gemm_nt"))["gemm_nt"])
    hits = [f for f in found if f.check == check and f.severity == "error"]
    assert hits, f"{bug}: " + "; ".join(f"{f.check}@{f.loc.line}" for f in found)
    assert hits[0].loc.line == want, (bug, [(f.check, f.loc.line) for f in found])
    assert hits[0].counterexample is not None


def test_the_interpreter_agrees_a_swapped_block_is_wrong():
    src, _, _ = _bug("c1 gets the block c0 had")
    ir = parse_source(src, "epilogue_bug.py", config("gemm_nt", BLOCKS=1))["gemm_nt"]
    rng = np.random.default_rng(3)
    a, b = _bf16(rng, (128, 64)), _bf16(rng, (256, 64))
    res = interpret(ir, {"A": a, "B": b, "C": np.full((128, 256), np.nan, np.float32)}, seed=1)
    got = np.asarray(res.outputs["C"], np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.abs(got[:, 64:128] - ref[:, 64:128]).max() > 0.1 * np.abs(ref).max()
    assert np.allclose(got[:, 64:128], got[:, :64])


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_binary_has_constant_register_indices(name):
    from argus.codegen import generate
    from argus.runtime import BuildOptions, build_kernel, check_kernel_binary
    from argus.runtime.toolchain import find_tool, nvrtc_identity
    gen = generate(kernel_ir("gemm", name, **config(name)))
    assert gen.smem_bytes <= 227 * 1024
    # the block loop is unrolled: `acc[(2h + 1) * 32 + v]` folds to a constant per register
    assert "#pragma unroll\n" in gen.source and "acc[(" in gen.source
    if find_tool("nvcc") is None and nvrtc_identity() is None:
        pytest.skip("no CUDA compiler")
    if not (find_tool("cuobjdump") or find_tool("nvdisasm")):
        pytest.skip("no disassembler")
    entry = build_kernel(gen.source, BuildOptions())
    assert check_kernel_binary(entry, {
        "kernel": gen.name, "max_registers": 168, "max_stack_bytes": 0,
        "role_registers": {"producer": 40, "consumer": 232},
        "instructions": ["HGMMA", "UTMALDG", "UTMASTG", "SYNCS"]}) == []


def test_a_narrow_heuristic_tile_is_widened_for_the_chunks():
    # asked for by knob alone on a shape whose heuristic tile is 64 wide
    cfg = knobs_to_config({"epilogue": "tma_chunks"}, "kn", 128, 4096, 4096)
    assert cfg["BN"] == 128 and cfg["EPILOGUE"] == "tma_chunks"
