"""Rules for wgmma: shapes, dtypes and operand layouts of the instruction."""

from __future__ import annotations

from argus.ir.types import DType, FragmentType, SmemTileType

from .base import Args, rule

OPERAND_DTYPES = (DType.bf16, DType.fp16, DType.fp8e4m3)


@rule("wgmma")
def wgmma(fx, a: Args):
    acc = a.value("acc", FragmentType, what="an fp32 accumulator fragment")
    A = a.value("a", SmemTileType, FragmentType, what="a smem tile or a register fragment")
    B = a.value("b", SmemTileType, what="a shared-memory tile (N x K, K-major)")
    for name, x in (("a", A), ("b", B)):
        if len(x.type.shape) != 2:
            a.fail(name, f"operand {name} must be 2-D, got shape {x.type.shape}")
    major = a.static_str("b_major", ("k", "mn"))
    (m, ka), (n, kb) = A.type.shape, B.type.shape
    if major == "mn":
        kb, n = n, kb
        if B.type.dtype.bits != 16:
            a.fail("b_major", f"an MN-major b needs 16-bit operands, got {B.type.dtype}")
    if m != 64:
        a.fail("a", f"operand a has {m} rows; one wgmma covers 64 rows (m64)",
               "tile a by warpgroup: tile(a_s[s], (64, BK), (wg, 0))")
    if ka != kb:
        b_text = f"{n}x{kb}" if major == "k" else f"{kb}x{n} (MN-major)"
        a.fail("b", f"wrong shapes: a is {m}x{ka}, b is {b_text}; their K differ",
               "a is M x K and b is N x K (K-major); tile both with the same BK")
    if acc.type.shape != (m, n):
        a.fail("acc", f"wrong shapes: accumulator is {acc.type.shape}, a x b^T is ({m}, {n})",
               f"declare fragment(fp32, (64, {n}), \"wgmma_acc_m64n{n}\")")
    if acc.type.layout != f"wgmma_acc_m64n{n}":
        a.fail("acc", f"the accumulator must have layout wgmma_acc_m64n{n}, "
               f"got {acc.type.layout}")
    if acc.type.dtype not in (DType.fp32, DType.fp16):
        a.fail("acc", f"accumulator dtype must be fp32 or fp16, got {acc.type.dtype}")
    if A.type.dtype != B.type.dtype or A.type.dtype not in OPERAND_DTYPES:
        a.fail("b", f"operands must share a dtype of bf16, fp16 or fp8e4m3; got "
               f"{A.type.dtype} and {B.type.dtype}")
    k_step = 256 // A.type.dtype.bits
    if ka % k_step:
        a.fail("a", f"K = {ka} is not a multiple of the instruction K ({k_step} for "
               f"{A.type.dtype})")
    if isinstance(A.type, FragmentType) and not A.type.layout.startswith("wgmma_a_rs"):
        a.fail("a", f"a register operand a needs a wgmma_a_rs_* layout, got {A.type.layout}",
               "convert_layout(p, \"wgmma_a_rs_16bit\")")
    return fx.emit("wgmma.mma", (acc, A, B), a.call, attrs={"m": m, "n": n, "k": ka,
                                                                "b_major": major})


@rule("wgmma_fence")
def wgmma_fence(fx, a: Args):
    return fx.emit("wgmma.fence", (), a.call)


@rule("wgmma_commit")
def wgmma_commit(fx, a: Args):
    return fx.emit("wgmma.commit", (), a.call)


@rule("wgmma_wait")
def wgmma_wait(fx, a: Args):
    return fx.emit("wgmma.wait", (), a.call, attrs={"pending": a.static_int("pending", 0)})
