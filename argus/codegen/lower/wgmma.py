"""wgmma: each k16 step is one instruction whose descriptors come from the operand layouts
(argus.layout.hopper.descriptor on the views of argus.codegen.smem_tiles); only the start
address is added at run time."""

from __future__ import annotations

from dataclasses import replace

from argus.ir.types import DType
from argus.layout.hopper.descriptor import descriptor_for, instruction_k

from ..errors import CodegenError
from ..smem_tiles import as_operand
from ..values import Fragment, SmemTile

INPUT = {DType.bf16: "argus::WgmmaInput::bf16", DType.fp16: "argus::WgmmaInput::f16"}


def _fields(desc) -> str:
    return f"0x{replace(desc, start_address=0, source=None).encode():016x}ull"


def _mma(ctx, op):
    acc, a, b = (ctx.get(op.arg(n), op) for n in ("acc", "a", "b"))
    m, n, k, major = (op.attrs[x] for x in ("m", "n", "k", "b_major"))
    if isinstance(a, Fragment):
        _mma_rs(ctx, op, acc, a, b, m, n, k, major)
        return
    if a.dtype not in INPUT:
        raise CodegenError(f"wgmma on {a.dtype} is not generated yet (bf16, fp16)", op.loc)
    if not isinstance(acc, Fragment) or acc.count != n // 2 or acc.first != "0":
        raise CodegenError("the accumulator must be an m64n{N} fp32 fragment", op.loc)
    op_a = as_operand(a.geometry, "K")
    op_b = as_operand(b.geometry, "K" if major == "k" else "MN")
    trans_b = 0 if major == "k" else 1
    kk = instruction_k(a.dtype.bits // 8)
    for k0 in range(0, k, kk):
        da, db = descriptor_for(op_a, k0), descriptor_for(op_b, k0)
        ctx.em.line(f"argus::wgmma_ss<{n}, {INPUT[a.dtype]}, 0, {trans_b}>({acc.name}, "
                    f"{_descriptor(a.address, da)}, {_descriptor(b.address, db)}, true);")


def _descriptor(address: str, d) -> str:
    """The C expression of the descriptor of tile `address` at its k step's byte offset:
    the tile's own descriptor plus the offset (smem_descriptor_at), so that one tile's k
    steps share one descriptor computation."""
    if not d.start_address:
        return f"argus::smem_descriptor({address}, {_fields(d)})"
    return f"argus::smem_descriptor_at({address}, {d.start_address}, {_fields(d)})"


def _mma_rs(ctx, op, acc, a, b, m, n, k, major):
    """A from registers: the wgmma_a_rs_16bit fragment holds 8 values per thread per k16
    step (register v + 8 * step), packed in pairs into the instruction's four 32-bit
    registers (the even value in the low half)."""
    if a.layout != "wgmma_a_rs_16bit":
        raise CodegenError(f"wgmma's register A operand must be in layout wgmma_a_rs_16bit, "
                           f"not {a.layout}", op.loc,
                           "convert_layout(cast(p, bf16), \"wgmma_a_rs_16bit\")")
    dtype = a.cast or a.dtype
    if dtype not in INPUT:
        raise CodegenError(f"wgmma on {dtype} registers is not generated (bf16, fp16); cast "
                           "the fragment first", op.loc)
    if not isinstance(acc, Fragment) or acc.count != n // 2 or acc.first != "0":
        raise CodegenError("the accumulator must be an m64n{N} fp32 fragment", op.loc)
    if not isinstance(b, SmemTile):
        raise CodegenError("wgmma's B operand is a shared-memory tile", op.loc)
    op_b = as_operand(b.geometry, "K" if major == "k" else "MN")
    trans_b = 0 if major == "k" else 1
    kk = instruction_k(dtype.bits // 8)
    packed = getattr(ctx, "packed_a", {}).pop(id(op), None)
    for step, k0 in enumerate(range(0, k, kk)):
        db = descriptor_for(op_b, k0)
        if packed is not None:      # packed before the wgmma_fence that precedes this op
            ctx.em.line(f"argus::wgmma_rs<{n}, {INPUT[dtype]}, {trans_b}>({acc.name}, "
                        f"{packed[step]}, {_descriptor(b.address, db)}, true);")
            continue
        ctx.em.open("")
        ctx.em.line(f"const argus::u32 argus_a[4] = {{{_packs(a, dtype, step)}}};")
        ctx.em.line(f"argus::wgmma_rs<{n}, {INPUT[dtype]}, {trans_b}>({acc.name}, argus_a, "
                    f"{_descriptor(b.address, db)}, true);")
        ctx.em.close()


def _packs(a, dtype, step) -> str:
    """The four 32-bit registers of k16 step `step` of a register A fragment."""
    pack = "argus::pack_bf16x2" if dtype == DType.bf16 else "argus::pack_f16x2"
    return ", ".join(f"{pack}({a.reg(str(8 * step + 2 * i))}, {a.reg(str(8 * step + 2 * i + 1))})"
                     for i in range(4))


def _pack_register_operands(ctx):
    """The register A operands of the wgmmas a fence precedes (up to their commit), packed
    into 32-bit pairs before the fence: registers written between wgmma.fence and the
    wgmma reading them make ptxas inject a warpgroup.arrive of its own (info C7519)."""
    ctx.packed_a = getattr(ctx, "packed_a", {})
    for nxt in ctx.following or ():
        if nxt.opcode == "wgmma.commit":
            break
        if nxt.opcode != "wgmma.mma":
            continue
        a = ctx.values.get(id(nxt.arg("a")))
        if a is None:           # defined after the fence (a shared-memory tile view): not
            continue            # a register operand this fence can pack
        dtype = getattr(a, "cast", None) or getattr(a, "dtype", None)
        if not isinstance(a, Fragment) or a.layout != "wgmma_a_rs_16bit" or dtype not in INPUT:
            continue            # _mma_rs reports what is wrong with it
        names = []
        for step in range(nxt.attrs["k"] // instruction_k(dtype.bits // 8)):
            name = ctx.em.name(f"{a.name}_k{step}")
            ctx.em.line(f"const argus::u32 {name}[4] = {{{_packs(a, dtype, step)}}};")
            names.append(name)
        ctx.packed_a[id(nxt)] = names


def _fence_fragments(ctx):
    for frag in ctx.fragments:
        if frag.accumulator:
            ctx.em.line(f"argus::wgmma_fence_accumulators<{2 * frag.count}>({frag.name});")


def _fence(ctx, op):
    _pack_register_operands(ctx)
    _fence_fragments(ctx)
    ctx.em.line("argus::wgmma_fence();")


def _commit(ctx, op):
    ctx.em.line("argus::wgmma_commit_group();")


def _wait(ctx, op):
    ctx.em.line(f"argus::wgmma_wait_group<{op.attrs.get('pending', 0)}>();")
    _fence_fragments(ctx)


RULES = {"wgmma.mma": _mma, "wgmma.fence": _fence, "wgmma.commit": _commit,
         "wgmma.wait": _wait}
