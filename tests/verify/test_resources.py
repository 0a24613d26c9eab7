"""Resource checks (argus.verify.resources) on the examples and on small bad kernels."""

from __future__ import annotations

from pathlib import Path

from argus.frontend.parse import parse_file, parse_source
from argus.ir.printer import format_kernel
from argus.ir.reader import read_kernel
from argus.verify import resources

ROOT = Path(__file__).resolve().parents[2]
GEMM_PATH = ROOT / "examples" / "gemm.py"
GEMM = GEMM_PATH.read_text()
HEAD = "from argus.lang import *\n\n"


def _errors(kernel):
    return [f for f in resources.check(kernel) if f.severity == "error"]


def _gemm(**overrides):
    return parse_source(GEMM, str(GEMM_PATH), overrides=overrides or None)["gemm"]


def test_gemm_and_copy_fit():
    assert _errors(_gemm()) == []
    assert _errors(parse_file(ROOT / "examples" / "copy.py")["copy"]) == []
    total, _ = resources.smem_bytes(_gemm())
    assert total == 4 * (16384 + 32768) + 8 * 8          # stages of A and B, 8 mbarriers


def test_flash_attention_fits_its_register_pool():
    # 24 x 128 + 240 x 256 = 64512 registers, the pool of a 384-thread block (FA3's split);
    # the example had 40 for the producer (66560), which this check caught
    errors = _errors(parse_file(ROOT / "examples" / "flash_attention.py")["flash_fwd"])
    assert errors == []


def test_five_stages_overflow_shared_memory():
    errors = _errors(_gemm(S=5))
    assert [f.check for f in errors] == ["resources.smem"]
    f = errors[0]
    assert f.loc.line == next(i + 1 for i, l in enumerate(GEMM.splitlines()) if "b_s = smem(" in l)
    assert "245840 B" in f.message and "232448" in f.message   # 5 x 48 KB + 10 x 8 B
    assert f.counterexample.smem_byte == 245840


def test_register_budget_not_a_multiple_of_8():
    text = format_kernel(_gemm()).replace("regs=40", "regs=44")
    errors = _errors(read_kernel(text))
    assert any(f.check == "resources.registers" and "44" in f.message for f in errors)


def test_register_pool_overcommitted():
    src = GEMM.replace('regs=232', 'regs=240')
    errors = _errors(parse_source(src, "gemm240.py")["gemm"])
    assert [f.check for f in errors] == ["resources.registers"]
    assert "65536" in errors[0].message and "64512" in errors[0].message
    assert errors[0].loc.line == next(i + 1 for i, l in enumerate(src.splitlines())
                                      if 'role("consumer"' in l)


def test_cluster_of_16_blocks():
    text = format_kernel(_gemm()).replace("cluster=(1, 1, 1)", "cluster=(16, 1, 1)")
    errors = _errors(read_kernel(text))
    checks = [f.check for f in errors]
    assert "resources.cluster" in checks
    assert any("16 blocks" in f.message for f in errors)
    assert any("not a multiple" in f.message for f in errors)     # 132 % 16


WIDE = HEAD + '''
@kernel(grid=(1,), block=128)
def wide(X: Tensor[64, 128, bf16]):
    buf = smem(bf16, (64, 128), swizzle="128B")
    full = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(full[0], 1)
    fence_mbarrier_init()
    sync_block()
    with elect_one():
        expect_tx(full[0], nbytes(buf[0]))
        tma_load(buf[0], tile(X, (64, 128), (0, 0)), full[0])
    wait(full[0], 0)
'''


def test_tma_box_wider_than_its_swizzle_span_is_split_and_a_tall_box_is_refused():
    # a tile a whole number of spans wide is legal: the backend issues one box per 128-byte
    # column chunk (docs/design/codegen.md, the tile convention)
    assert _errors(parse_source(WIDE, "wide.py")["wide"]) == []
    tall = WIDE.replace("(64, 128)", "(512, 64)").replace("Tensor[64, 128, bf16]",
                                                          "Tensor[512, 64, bf16]")
    errors = _errors(parse_source(tall, "tall.py")["wide"])
    assert [f.check for f in errors] == ["resources.tma-box"]
    assert "512" in errors[0].message and "256" in errors[0].message


def test_tma_row_stride_needs_16_byte_multiples_for_every_allowed_size():
    src = GEMM.replace("    assume(K % BK == 0)\n", "")
    errors = _errors(parse_source(src, "nok.py")["gemm"])
    f = [f for f in errors if f.check == "resources.tma-box"]
    assert f and "16 B" in f[0].message
    assert f[0].counterexample.sizes["K"] % 8 != 0
    assert "assume(K % 8 == 0)" in f[0].hint


OVERFLOW = HEAD + '''
@kernel(grid=("M // 64",), block=128)
def far(X: Tensor["M", 64, fp32], Y: Tensor["M", 64, fp32]):
    assume(M % 64 == 0)
    bx = block_id("x")
    x = load(tile(X, (64, 64), (bx, 0)), "blocked")
    store(tile(Y, (64, 64), (bx * 65536, 0)), x)
'''


def test_int32_overflow_of_tile_coordinates():
    errors = _errors(parse_source(OVERFLOW, "far.py")["far"])
    f = [f for f in errors if f.check == "resources.index-overflow"]
    assert len(f) == 1 and f[0].loc.line == OVERFLOW.splitlines().index(
        "    store(tile(Y, (64, 64), (bx * 65536, 0)), x)") + 1
    assert f[0].counterexample.sizes["M"] >= 64 * 512       # bx >= 512 overflows


def _far_model():
    from argus.verify.protocol.model import build
    return build(parse_source(OVERFLOW, "far.py")["far"])


def test_a_coordinate_the_model_cannot_express_is_reported_not_skipped():
    m = _far_model()
    tiles = [e for e in m.opcode("tile") if e.op.result.type.tensor == "Y"]
    coord = tiles[0].op.args("coords")[0]
    del m.terms.env[coord]                       # as if the model had no term for it
    found = resources._index_overflow(m)
    undecided = [f for f in found if f.check == "resources.undecided"]
    assert len(undecided) == 1 and undecided[0].severity == "warning"
    assert undecided[0].loc == tiles[0].op.loc
    assert "did not run" in undecided[0].message and "Y" in undecided[0].message


def test_a_solver_that_gives_up_is_reported_not_skipped(monkeypatch):
    from argus.verify.protocol.smt import SolverUnknown

    def gives_up(*args, **kwargs):
        raise SolverUnknown("timeout")
    monkeypatch.setattr(resources.smt, "find", gives_up)
    found = resources._index_overflow(_far_model())
    assert found and all(f.check == "resources.undecided" for f in found)
    assert any("gave up" in f.message for f in found)
