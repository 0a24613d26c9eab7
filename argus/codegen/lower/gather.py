"""The warpgroup's row gather, `gather_cp_async(dst, X, rows, col, bar)`: every thread copies
its 16-byte chunks of the gathered rows with cp.async (LDGSTS) at their swizzled addresses,
then arrives once on `bar` when they have landed (cp.async.mbarrier.arrive.noinc).

Which thread copies what is argus.ir.gather_chunks: warp w owns rows [w R/4, (w+1) R/4) and
its i-th copy takes chunk i * 32 + lane of those rows, row-major, so one copy instruction of
a warp reads 32 / C whole rows (C chunks a row: four 128-byte rows for BK = 64 bf16). Lane l
reads the index of the warp's row l once (a coalesced 4-byte load) and the copies take
theirs by shuffle. A chunk lands where the TMA image of the tile has it (the tile convention
of argus/codegen/smem_tiles.py: chunk column block c // (span/16) at its chunk stride, row r
at r * span, the 16-byte unit c % (span/16), the hardware swizzle of the absolute address),
so the wgmma descriptors read it unchanged. A row outside the tensor copies 0 source bytes
(zero-filled), as TMA fills out-of-bounds rows; the row pitch must be a multiple of 16 bytes
(an assumption the launcher checks, kernel.py)."""

from __future__ import annotations

from argus.ir import gather_chunks
from argus.layout.hopper.smem import SWIZZLE_SPAN_BYTES
from argus.limits import WARP_SIZE

from ..errors import CodegenError
from ..values import IndexVector, SmemTile, TensorParam

SWIZZLE_BITS = {"32B": 1, "64B": 2, "128B": 3}    # address bits [7, 7+b) fold into [4, 4+b)


def chunk_address(dst: SmemTile, row: str, chunk: str) -> str:
    """C expression: the swizzled shared address of 16-byte chunk `chunk` of row `row`."""
    g = dst.geometry
    units = g.span // gather_chunks.CHUNK_BYTES           # 16-byte units per swizzle span
    per_row = g.cols * g.element_bytes // gather_chunks.CHUNK_BYTES
    column = f" + ({chunk} / {units}) * {g.chunk_stride}" if per_row > units else ""
    unit = f"({chunk} % {units})" if per_row > units else chunk
    first = f"({row} + {g.row0})" if g.row0 else row
    plain = (f"{dst.address}{column} + {first} * {g.span} + "
             f"{unit} * {gather_chunks.CHUNK_BYTES}")
    if g.swizzle == "none":
        return plain
    return f"argus::swizzle_address<{SWIZZLE_BITS[g.swizzle]}>({plain})"


def _gather_cp_async(ctx, op):
    dst = ctx.get(op.arg("dst"), op)
    tensor = ctx.get(op.arg("src"), op)
    rows = ctx.get(op.arg("rows"), op)
    col = ctx.expr(op.arg("col"), op)
    bar = ctx.get(op.arg("bar"), op)
    if not isinstance(dst, SmemTile) or not isinstance(tensor, TensorParam):
        raise CodegenError("gather_cp_async copies rows of a global tensor into a shared tile",
                           op.loc)
    if not isinstance(rows, IndexVector):
        raise CodegenError("gather_cp_async takes its rows from an index vector "
                           "(load_indices)", op.loc)
    if tensor is not tensor.root:
        raise CodegenError("gather_cp_async from a segment is not generated; gather from the "
                           "tensor (the indices name its rows)", op.loc)
    if ctx.role_warpgroups is None:
        raise CodegenError("gather_cp_async runs in a role", op.loc)
    g = dst.geometry
    row_bytes = g.cols * g.element_bytes
    why = gather_chunks.problem(g.rows, row_bytes)
    if why or rows.length != g.rows or len(tensor.shape) != 2:
        raise CodegenError(why or f"a gather of {rows.length} rows into a tile of {g.rows}",
                           op.loc)
    if g.swizzle != "none" and g.span != SWIZZLE_SPAN_BYTES[g.swizzle]:
        raise CodegenError(f"a {g.swizzle} tile of span {g.span} B", op.loc)
    per_row = row_bytes // gather_chunks.CHUNK_BYTES
    per_warp = g.rows // gather_chunks.WARPS
    per_chunk = gather_chunks.CHUNK_BYTES // g.element_bytes
    n, ld = tensor.shape
    em = ctx.em
    em.open("", f"{g.rows} rows x {row_bytes} B gathered by the warpgroup: "
                f"{gather_chunks.copies_per_thread(g.rows, row_bytes)} cp.async of 16 B a thread, "
                "then its arrival")
    em.line(f"const int argus_gwarp = argus_lane / {WARP_SIZE}, argus_glane = argus_lane % "
            f"{WARP_SIZE};")
    first = f"argus_gwarp * {per_warp} + argus_glane"
    # warp w's lane l reads its warp's row l (gather_chunks.index_row), read once where the
    # vector was loaded when it is in a register (IndexVector.lane)
    token = rows.lane if rows.lane else rows.element(first)
    if per_warp < WARP_SIZE:
        token = f"argus_glane < {per_warp} ? {token} : 0"
    em.line(f"const int argus_grow = {token};  // the index of this warp's row argus_glane")
    em.line("#pragma unroll")
    em.open(f"for (int argus_i = 0; argus_i < "
            f"{gather_chunks.copies_per_thread(g.rows, row_bytes)}; ++argus_i)")
    em.line(f"const int argus_q = argus_i * {WARP_SIZE} + argus_glane;  // the warp's chunk, "
            "row-major over its rows")
    em.line(f"const int argus_src = __shfl_sync(0xffffffffu, argus_grow, argus_q / {per_row});")
    em.line(f"const int argus_col = ({col}) * {g.cols} + (argus_q % {per_row}) * {per_chunk};")
    em.line(f"const bool argus_in = (unsigned)argus_src < (unsigned)({n}) && argus_col < {ld};")
    to = chunk_address(dst, f"(argus_gwarp * {per_warp} + argus_q / {per_row})",
                       f"(argus_q % {per_row})")
    em.line(f"argus::cp_async_16({to},")
    em.line(f"                   {tensor.pointer} + (argus_in ? (unsigned)argus_src * "
            f"(unsigned long long)({ld}) + argus_col : 0ull), argus_in ? 16u : 0u);")
    em.close()
    em.line(f"argus::cp_async_arrive_noinc({bar.address});")
    em.close()


RULES = {"gather.cp_async": _gather_cp_async}
