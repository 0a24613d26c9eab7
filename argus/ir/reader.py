"""Read the printer's text form back into a Kernel (round trip: print . read . print is
the identity), so IR dumps can be edited, diffed and fed to later stages."""

from __future__ import annotations

import ast
import re
from typing import Any

from . import tagexpr as T
from .nodes import Block, Kernel, Launch, Loc, Op, Role, Schedule, Value
from .types import (DTYPES, BarrierArrayType, BarrierType, FragmentType, GlobalTensorType,
                    GlobalTileType, IndexVectorType, ScalarType, SmemBufferType, SmemTileType)

OPEN, CLOSE = "([<{", ")]>}"


class IRSyntaxError(ValueError):
    def __init__(self, line: int, message: str):
        super().__init__(f"<ir>:{line}: {message}")


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside brackets (a < or > after a space is a comparison, as in a
    tag predicate, not the bracket of a type like frag<fp32>)."""
    parts, depth, cur = [], 0, ""
    for i, ch in enumerate(text):
        comparison = ch in "<>" and (i == 0 or text[i - 1] == " ")
        if ch in OPEN and not comparison:
            depth += 1
        elif ch in CLOSE and not comparison:
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _dim(s: str):
    return int(s) if s.lstrip("-").isdigit() else s


def parse_type(s: str):
    s = s.strip()
    if s in DTYPES:
        return ScalarType(DTYPES[s])
    m = re.fullmatch(r"(\w+)<(\w+)>\[(.*)\](?: of (\S+))?", s)
    if m:
        kind, dtype, inner, owner = m.group(1), DTYPES[m.group(2)], m.group(3), m.group(4)
        items = split_top(inner)
        named = dict(i.split("=", 1) for i in items if "=" in i)
        dims = [i for i in items if "=" not in i]
        if kind == "global":
            return GlobalTensorType(tuple(_dim(d) for d in dims), dtype)
        if kind == "gtile":
            return GlobalTileType(owner, tuple(int(d) for d in dims), dtype)
        if kind == "smem":
            stages, first = dims[0].split(" x ")
            shape = (int(first), *(int(d) for d in dims[1:]))
            return SmemBufferType(int(stages), shape, dtype, named["swizzle"])
        if kind == "stile":
            return SmemTileType(owner, tuple(int(d) for d in dims), dtype, named["swizzle"])
        if kind == "frag":
            return FragmentType(tuple(int(d) for d in dims), dtype, named["layout"])
    m = re.fullmatch(r"mbarrier\[(\d+)\]", s)
    if m:
        return BarrierArrayType(int(m.group(1)))
    m = re.fullmatch(r"mbarrier of (\S+)", s)
    if m:
        return BarrierType(m.group(1))
    m = re.fullmatch(r"indices\[(\d+)\]", s)
    if m:
        return IndexVectorType(int(m.group(1)))
    raise ValueError(f"unknown type {s!r}")


def parse_value(s: str) -> Any:
    s = s.strip()
    if s.startswith("(") and s.endswith(")"):
        return tuple(parse_value(p) for p in split_top(s[1:-1]))
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(s, s)


def parse_tag_expr(text: str) -> T.TagExpr:
    ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

    def conv(n):
        if isinstance(n, ast.BoolOp):
            out = conv(n.values[0])
            for v in n.values[1:]:
                out = T.BinExpr("and" if isinstance(n.op, ast.And) else "or", out, conv(v))
            return out
        if isinstance(n, ast.Compare):
            return T.BinExpr(ops[type(n.ops[0])], conv(n.left), conv(n.comparators[0]))
        if isinstance(n, ast.BinOp):
            return T.BinExpr(ops[type(n.op)], conv(n.left), conv(n.right))
        if isinstance(n, ast.Attribute):
            return T.TagField(int(n.value.args[0].id[1:]), n.attr)
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            return T.Lookup(int(n.value.id[1:]), conv(n.slice))
        if isinstance(n, ast.Subscript):
            return T.CoordOf(int(n.value.args[0].id[1:]), n.slice.value)
        if isinstance(n, ast.Call) and n.func.id == "value":
            return T.ValueOf(int(n.args[0].id[1:]))
        if isinstance(n, ast.Name):
            return T.ScalarRef(int(n.id[1:]))
        return T.Const(n.value)
    return conv(ast.parse(re.sub(r"\$(\d+)", r"_\1", text), mode="eval").body)


class _Reader:
    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.pos = 0
        self.env: dict[str, Value] = {}

    def fail(self, message: str):
        raise IRSyntaxError(self.pos, message)

    def value(self, name: str) -> Value:
        if name not in self.env:
            self.fail(f"%{name} is not defined")
        return self.env[name]

    def define(self, name: str, type_) -> Value:
        v = Value(name, type_)
        self.env[name] = v
        return v

    def kernel(self) -> Kernel:
        m = re.fullmatch(r"kernel @(\w+)\((.*)\) \{", self.lines[0])
        if not m:
            self.fail("expected `kernel @name(...) {`")
        params = []
        for p in split_top(m.group(2)):
            name, type_ = p.split(": ", 1)
            params.append(self.define(name.lstrip("%"), parse_type(type_)))
        symbols, constants, roles, schedules, arguments = [], {}, [], [], ()
        grid, block, cluster, blocks_per_sm, block_order = ("1",), 128, (1, 1, 1), 1, "forward"
        self.pos = 1
        while self.pos < len(self.lines):
            line = self.lines[self.pos].strip()
            if line.startswith("symbols "):
                symbols = [self.define(s.strip().lstrip("%"), ScalarType(DTYPES["index"]))
                           for s in line[8:].split(",")]
            elif line.startswith("arguments "):
                arguments = tuple(a.strip().lstrip("%") for a in line[10:].split(","))
                known = {v.name for v in params} | {v.name for v in symbols}
                for a in arguments:
                    if a not in known:
                        self.fail(f"argument %{a} is neither a parameter nor a symbol")
            elif line.startswith("const "):
                name, val = line[6:].split(" = ", 1)
                constants[name] = parse_value(val)
            elif line.startswith("launch "):
                m = re.fullmatch(r"launch grid=\((.*)\) block=(\d+) cluster=\(([^)]*)\)"
                                 r"(?: blocks_per_sm=(\d+))?(?: block_order=(\w+))?", line)
                grid = tuple(split_top(m.group(1)))
                block, cluster = int(m.group(2)), tuple(int(c) for c in m.group(3).split(","))
                blocks_per_sm = int(m.group(4) or 1)
                block_order = m.group(5) or "forward"
            elif re.match(r"role \w+ warpgroups=", line):
                m = re.fullmatch(r"role (\w+) warpgroups=\((.*)\) regs=(\d+)", line)
                roles.append(Role(m.group(1), tuple(int(w) for w in m.group(2).split(",")),
                                  int(m.group(3)), Loc("<ir>", self.pos + 1, 1)))
            elif line.startswith("schedule tiles="):
                m = re.fullmatch(r"schedule tiles=\((.*)\) order=(\w+) group=(\d+)", line)
                schedules.append(Schedule(tuple(split_top(m.group(1))), m.group(2),
                                          int(m.group(3)), Loc("<ir>", self.pos + 1, 1)))
            else:
                break
            self.pos += 1
        body = self.block(())
        return Kernel(_kernel_name(self.lines[0]), tuple(params), tuple(symbols), constants,
                      Launch(grid, block, cluster, tuple(roles), tuple(schedules),
                             blocks_per_sm, block_order), body,
                      Loc("<ir>", 1, 1), arguments)

    def block(self, args: tuple[Value, ...]) -> Block:
        block = Block([], args)
        while self.pos < len(self.lines):
            line = self.lines[self.pos].strip()
            if line == "}" or line.startswith("} else"):
                return block
            self.pos += 1
            block.ops.append(self.op(line))
        return block

    def region_args(self, text: str) -> tuple[Value, ...]:
        return tuple(self.define(a.split(": ", 1)[0].lstrip("%"), parse_type(a.split(": ", 1)[1]))
                     for a in split_top(text))

    def op(self, line: str) -> Op:
        opens_region = line.endswith(" {")
        if opens_region:
            line = line[:-2]
        first_args: tuple[Value, ...] = ()
        m = re.search(r" \((%\w[\w.]*: .*)\)$", line)
        if opens_region and m:
            pending_args, line = m.group(1), line[:m.start()]
        else:
            pending_args = None
        loc = Loc("<ir>", self.pos, 1)
        m = re.search(r"  @(.+):(\d+):(\d+)$", line)
        if m:
            loc, line = Loc(m.group(1), int(m.group(2)), int(m.group(3))), line[:m.start()]
        names: list[str] = []
        m = re.match(r"((?:%[\w.]+, )*%[\w.]+) = ", line)
        if m:
            names = [n.strip().lstrip("%") for n in m.group(1).split(",")]
            line = line[m.end():]
        types: list[str] = []
        if names:
            line, _, ty = line.rpartition(" : ")
            types = split_top(ty)
        attrs: dict[str, Any] = {}
        if line.endswith("}") and " {" in line:
            start = line.index(" {")
            body, line = line[start + 2:-1], line[:start]
            for item in split_top(body):
                key, val = item.split("=", 1)
                attrs[key] = parse_tag_expr(val) if key == "pred" and "$" in val else (
                    val if key == "text" else parse_value(val))
            if "text" in attrs:   # free text runs to the end of the attribute block
                attrs["text"] = body.split("text=", 1)[1]
        opcode, _, rest = line.partition(" ")
        operands = tuple(self.value(o[1:]) if o.startswith("%") else parse_value(o)
                         for o in split_top(rest)) if rest else ()
        regions: list[Block] = []
        if opens_region:
            if pending_args:
                first_args = self.region_args(pending_args)
            regions.append(self.block(first_args))
            while self.lines[self.pos].strip().startswith("} else"):
                self.pos += 1
                regions.append(self.block(()))
            self.pos += 1   # the closing brace
        results = tuple(self.define(n, parse_type(t)) for n, t in zip(names, types))
        return Op(opcode, operands, results, attrs, loc, tuple(regions))


def _kernel_name(header: str) -> str:
    return re.match(r"kernel @(\w+)", header).group(1)


def read_kernel(text: str) -> Kernel:
    return _Reader(text).kernel()
