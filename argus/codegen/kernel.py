"""IR kernel -> CUDA C++ for sm_90a: the signature, the shared-memory base, the body.

Parameters, in order: one pointer per global tensor, one int per shape symbol, then one
`const __grid_constant__ argus::TensorMap` per (tensor, box, swizzle) that a TMA op uses.
`GeneratedKernel.params` lists them for the launcher; `assumptions` are the kernel's
`assume` conditions as Python expressions over the shape symbols, checked at launch (and
what its ops need of the sizes: a cp.async gather's rows of whole 16-byte chunks).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from pathlib import Path

from argus.ir import gather_chunks
from argus.ir.nodes import Kernel
from argus.ir.types import GlobalTensorType, ScalarType
from argus.limits import (MAX_REGISTERS_PER_THREAD, SMEM_BASE_ALIGN, SMEM_PER_BLOCK,
                          WARPGROUP_THREADS, registers_at_entry, smem_fits_sm)

from .context import Context, ParamSpec, TensorMapSpec
from .emitter import Emitter
from .errors import CodegenError
from .lower.structure import lower_block
from .values import C_ELEMENT, TensorParam

HEADERS = ("argus_address.cuh", "argus_convert.cuh", "argus_cp_async.cuh", "argus_descriptor.cuh", "argus_exchange.cuh", "argus_fence.cuh", "argus_grid_dependency.cuh", "argus_ldmatrix.cuh", "argus_math.cuh",
           "argus_mbarrier.cuh", "argus_reduce.cuh", "argus_regs.cuh", "argus_tma.cuh", "argus_vector.cuh",
           "argus_wgmma.cuh")


@dataclass(frozen=True)
class GeneratedKernel:
    name: str                    # the C entry point
    source: str
    params: tuple[ParamSpec, ...]
    tensor_maps: tuple[TensorMapSpec, ...]
    smem_bytes: int              # dynamic shared memory to request (incl. alignment slack)
    block: int
    grid: tuple[str, ...]
    cluster: tuple[int, int, int]
    assumptions: tuple[tuple[str, str], ...]    # (python expression, "file:line")
    roles: dict
    blocks_per_sm: int = 1       # resident blocks an SM is meant to hold (the runtime asks
                                 # for the shared-memory carveout that lets them)

    def describe(self) -> dict:
        return {"name": self.name, "smem_bytes": self.smem_bytes, "block": self.block,
                "grid": list(self.grid), "cluster": list(self.cluster),
                "blocks_per_sm": self.blocks_per_sm, "params": [p.name for p in self.params]}


def generate(kernel: Kernel, source_lines: list[str] | None = None) -> GeneratedKernel:
    if source_lines is None:
        try:
            source_lines = Path(kernel.loc.file).read_text().splitlines()
        except OSError:
            source_lines = []
    em = Emitter(source_lines)
    ctx = Context(kernel, em)
    ctx.accumulators = {id(op.arg("acc")) for op in kernel.walk() if op.opcode == "wgmma.mma"}
    block = kernel.launch.block
    if block % WARPGROUP_THREADS and kernel.launch.roles:
        raise CodegenError(f"a kernel with roles needs whole warpgroups (block={block})",
                           kernel.loc)
    occupancy = kernel.launch.blocks_per_sm
    ctx.default_regs = min(MAX_REGISTERS_PER_THREAD, registers_at_entry(block, occupancy))
    params: list[ParamSpec] = []
    sizes: dict[str, str] = {}
    for sym in kernel.symbols:
        sizes[sym.name] = em.name(sym.name)
    for p in kernel.params:
        if isinstance(p.type, GlobalTensorType):
            shape = tuple(d if isinstance(d, int) else sizes[d] for d in p.type.shape)
            tp = TensorParam(p.name, p.type.dtype, shape, em.name(p.name))
            ctx.tensors[p.name] = tp
            ctx.bind(p, tp)
            params.append(ParamSpec("pointer", tp.pointer, p.name))
        elif isinstance(p.type, ScalarType):
            raise CodegenError(f"scalar parameter {p.name} is not supported by the backend yet",
                               kernel.loc, "make it a const parameter")
    for sym in kernel.symbols:
        from .values import Scalar
        ctx.bind(sym, Scalar(sizes[sym.name], 0))
        params.append(ParamSpec("size", sizes[sym.name], sym.name))

    body = Emitter(source_lines)
    body._names = em._names
    ctx.em = body
    body.level = 1
    lower_block(ctx, kernel.body)
    exchange_offset = None
    if ctx.exchange_bytes:       # one exchange buffer per warpgroup, after the kernel's own
        per_warpgroup = -(-ctx.exchange_bytes // 16) * 16
        exchange_offset = ctx.allocate_smem(per_warpgroup * max(1, block // 128), 16)
    smem_bytes = ctx.smem_bytes + (SMEM_BASE_ALIGN if ctx.smem_bytes else 0)
    if ctx.smem_bytes > SMEM_PER_BLOCK:
        raise CodegenError(f"the kernel needs {ctx.smem_bytes} B of shared memory, over the "
                           f"{SMEM_PER_BLOCK} B a block can have", kernel.loc,
                           "use fewer stages or smaller tiles")
    if not smem_fits_sm(smem_bytes, occupancy):
        raise CodegenError(f"blocks_per_sm={occupancy} blocks of {smem_bytes} B of shared "
                           "memory do not fit one SM's", kernel.loc,
                           "use fewer blocks per SM, fewer stages or smaller tiles")
    named = _named_in_code(body.lines, [p.name for p in params if p.kind == "pointer"])
    params = [replace(p, addressed=p.name in named) if p.kind == "pointer" else p
              for p in params]
    maps = tuple(ctx.tensor_maps.values())
    params += [ParamSpec("tensormap", m.param, m.tensor, m) for m in maps]

    out = Emitter(source_lines)
    out.line(f"// Generated by Argus from {kernel.loc.file}::{kernel.name}. Do not edit:")
    out.line("// change the DSL kernel instead. Comments name the DSL line each part comes from.")
    for h in HEADERS:
        out.line(f'#include "{h}"')
    out.line()
    args = []
    for p in params:
        if p.kind == "pointer":
            t = ctx.tensors[p.source]
            args.append(f"{C_ELEMENT[t.dtype]}* __restrict__ {p.name}")
        elif p.kind == "size":
            args.append(f"const int {p.name}")
        else:
            args.append(f"const __grid_constant__ argus::TensorMap {p.name}")
    # blocks_per_sm blocks (one by default) share the SM's registers: ptxas may use up to
    # 65536 / (block * blocks_per_sm) registers a thread (with no minimum, it aims at
    # occupancy and spills fragment-heavy kernels)
    bounds = f"__launch_bounds__({block}, {occupancy})"
    if kernel.launch.roles:
        # the registers each thread starts with must lie between the smallest and the
        # largest role budget (setmaxnreg.dec lowers, .inc raises or keeps): 65536 / 384
        # threads gives 168, but one block of 256 threads would start at 255, above a
        # consumer's 232, so there the count is capped (the two cannot be combined); two
        # blocks of 256 start at 128
        cap = max(r.regs for r in kernel.launch.roles)
        bounds = (bounds if registers_at_entry(block, occupancy) <= cap
                  else f"__maxnreg__({cap})")
    out.line(f'extern "C" __global__ void {bounds} {kernel.name}(')
    for i, a in enumerate(args):
        out.line(f"    {a}{',' if i + 1 < len(args) else ') {'}")
    if not args:
        out.line("    ) {")
    out.level = 1
    # before any memory access: the grids this launch depends on have completed (a no-op
    # unless launched with programmatic stream serialization, ARGUS_PDL=1); then the grids
    # that depend on this one may be scheduled and wait at this same line of theirs
    out.line("argus::grid_dependency_wait();")
    out.line("argus::launch_dependents();")
    if ctx.smem_bytes:
        out.line("extern __shared__ __align__(1024) unsigned char argus_smem_raw[];")
        out.line("const argus::u32 argus_smem = (argus::shared_address(argus_smem_raw) + 1023u) "
                 "& ~1023u;")
    # read from lane 0 of the warp: ptxas then knows it is warp-uniform, so a role's branch
    # does not diverge inside a warp (with a plain threadIdx.x / 128 it serializes a
    # register-A wgmma behind a warpgroup.arrive it injects on a divergent path: C7520)
    out.line("const int argus_warpgroup = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);")
    out.line("const int argus_lane = (int)threadIdx.x % 128;  // thread in its warpgroup")
    out.line("(void)argus_warpgroup; (void)argus_lane;")
    if exchange_offset is not None:
        out.line(f"const argus::u32 argus_exchange = argus_smem + {exchange_offset} + "
                 f"argus_warpgroup * {per_warpgroup};  // this warpgroup's exchange buffer")
    out.lines.extend(body.lines)
    out.level = 0
    out.line("}")
    return GeneratedKernel(kernel.name, out.text(), tuple(params), maps, smem_bytes, block,
                           tuple(kernel.launch.grid), tuple(kernel.launch.cluster),
                           tuple(_assumptions(kernel)),
                           {r.name: {"warpgroups": list(r.warpgroups), "regs": r.regs}
                            for r in kernel.launch.roles}, occupancy)


def _named_in_code(lines: list[str], names: list[str]) -> set[str]:
    """The C names among `names` that the emitted code uses (comments, which quote the DSL
    source, stripped): a pointer parameter it never names is reached only through tensor
    maps."""
    code = "\n".join(line.split("//", 1)[0] for line in lines)
    return {n for n in names if re.search(rf"\b{re.escape(n)}\b", code)}


def _assumptions(kernel: Kernel):
    """Each `assume` as a Python expression over the shape symbols (folded through arith)."""
    exprs: dict[int, str] = {id(s): s.name for s in kernel.symbols}
    py = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%", "eq": "==",
          "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "land": "and",
          "lor": "or", "and": "&", "or": "|", "xor": "^"}
    for op in kernel.body.ops:     # assumptions live at the top level of the kernel
        if op.opcode.startswith("arith.") and op.opcode[6:] in py:     # lhs, rhs
            parts = []
            for x in (op.arg("lhs"), op.arg("rhs")):
                if isinstance(x, (int, float)):
                    parts.append(repr(x))
                elif id(x) in exprs:
                    parts.append(exprs[id(x)])
                else:
                    break
            else:
                exprs[id(op.result)] = f"({parts[0]} {py[op.opcode[6:]]} {parts[1]})"
        elif op.opcode == "assume":
            cond = op.arg("cond")
            if id(cond) in exprs:
                text = exprs[id(cond)]
                ast.parse(text, mode="eval")
                yield text, f"{op.loc.file}:{op.loc.line}"
    yield from _gather_pitches(kernel)


def _gather_pitches(kernel: Kernel):
    """What a gather_cp_async needs of its tensor: rows of a whole number of 16-byte chunks
    (each cp.async reads 16 aligned bytes), stated at the gather's line."""
    for op in kernel.walk():
        if op.opcode != "gather.cp_async":
            continue
        t = op.arg("src").type
        per_chunk = gather_chunks.CHUNK_BYTES * 8 // t.dtype.bits
        width = t.shape[-1]
        if isinstance(width, str) and width.isidentifier():
            yield f"({width} % {per_chunk} == 0)", f"{op.loc.file}:{op.loc.line}"
