"""The stable text form of the IR (`argus compile --emit ir`, golden tests).

Values print as %name, attributes sorted by key, one op per line, regions indented;
`locs=True` appends each op's file:line:col.
"""

from __future__ import annotations

from typing import Any

from .nodes import Block, Kernel, Op, Value


def _attr(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_attr(v) for v in value) + ")"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_attr(v)}" for k, v in value.items()) + "}"
    return str(value)


def _operand(x: Any) -> str:
    return f"%{x.name}" if isinstance(x, Value) else repr(x)


def format_op(op: Op, locs: bool = False) -> str:
    head = ""
    if op.results:
        head = ", ".join(f"%{r.name}" for r in op.results) + " = "
    text = head + op.opcode
    if op.operands:
        text += " " + ", ".join(_operand(x) for x in op.operands)
    if op.attrs:
        text += " {" + ", ".join(f"{k}={_attr(op.attrs[k])}" for k in sorted(op.attrs)) + "}"
    if op.results:
        text += " : " + ", ".join(str(r.type) for r in op.results)
    if locs:
        text += f"  @{op.loc}"
    return text


def _block(block: Block, depth: int, locs: bool, out: list[str]) -> None:
    pad = "  " * depth
    for op in block.ops:
        line = pad + format_op(op, locs)
        if not op.regions:
            out.append(line)
            continue
        for i, region in enumerate(op.regions):
            args = ""
            if region.args:
                args = " (" + ", ".join(f"%{a.name}: {a.type}" for a in region.args) + ")"
            out.append((line if i == 0 else pad + "} else") + args + " {")
            _block(region, depth + 1, locs, out)
        out.append(pad + "}")


def format_kernel(kernel: Kernel, locs: bool = False) -> str:
    params = ", ".join(f"%{p.name}: {p.type}" for p in kernel.params)
    out = [f"kernel @{kernel.name}({params}) {{"]
    if kernel.symbols:
        out.append("  symbols " + ", ".join(f"%{s.name}" for s in kernel.symbols))
    if kernel.arguments:
        out.append("  arguments " + ", ".join(f"%{a}" for a in kernel.arguments))
    for name in sorted(kernel.constants):
        out.append(f"  const {name} = {_attr(kernel.constants[name])}")
    la = kernel.launch
    out.append(f"  launch grid=({', '.join(la.grid)}) block={la.block} "
               f"cluster=({', '.join(map(str, la.cluster))})"
               + (f" blocks_per_sm={la.blocks_per_sm}" if la.blocks_per_sm != 1 else "")
               + (f" block_order={la.block_order}" if la.block_order != "forward" else ""))
    for role in la.roles:
        wgs = ", ".join(map(str, role.warpgroups))
        out.append(f"  role {role.name} warpgroups=({wgs}) regs={role.regs}")
    for s in la.schedules:
        out.append(f"  schedule tiles=({', '.join(s.tiles)}) order={s.order} group={s.group}")
    _block(kernel.body, 1, locs, out)
    out.append("}")
    return "\n".join(out) + "\n"
