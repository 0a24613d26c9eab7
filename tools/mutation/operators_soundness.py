"""Operators for the mistakes the verifier's soundness issue (19) names, beyond
operators.py's index and protocol edits; one operator, one kind of mistake:

- operand_tensor: a tile()/gather() reads another tensor of the same rank (B's stage filled
                  from A, V loaded from K, the up weights read for the gate's); a shared
                  buffer operand of tma_load/wgmma/tile replaced by another buffer
- zero_trip:      a loop that runs no step: range(KT) -> range(0), schedule extent -> 0,
                  KT = K // BK -> K % BK and -> 0 // BK
- extent_compare: a loop extent written as a comparison (M // BM -> M > BM)
- sync_in_role:   sync_block() inserted at the start of one role's body, or of a loop in it
                  (a barrier only part of the block reaches)
- walk_order:     one role's tile walk in another order (schedule order= / group=, or the
                  two loops of a tile nest swapped)
- acc_reset:      an accumulator's init= dropped (never set to zero before its first use)
- step_guard:     a data op inside a loop (wgmma, tma_load, store, atomic_add) put under an
                  `if` on the loop's counter (`if k % 2 == 0:`, `if k > 0:`): some steps
                  skip it (a leftover of an unroll, a misplaced guard)
"""

from __future__ import annotations

import ast
import copy
from typing import Iterator

from tools.mutation.edit import Edit
from tools.mutation.sites import body_nodes, call_name, calls, text

READS = ("tile", "gather")
ORDERS = ("row_major", "grouped", "swizzled")


BUFFER_ARGS = {"tma_load": (0,), "gather_tma": (0,), "wgmma": (1, 2)}


def _buffer_operands(fn: ast.FunctionDef) -> Iterator[ast.Subscript]:
    """`x_s[s]` operands: tma_load/gather_tma destinations, wgmma's A and B, and tile()'s
    source when it is a stage of a buffer."""
    for call in calls(fn, *BUFFER_ARGS, "tile"):
        for i in BUFFER_ARGS.get(call_name(call), (0,)):
            a = call.args[i] if i < len(call.args) else None
            if isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name):
                yield a


def _buffers(fn: ast.FunctionDef) -> list[str]:
    """Names assigned from smem(...) in `fn`, and the buffers used as operands (helpers
    receive theirs as parameters)."""
    out = [n.targets[0].id for n in ast.walk(fn) if isinstance(n, ast.Assign)
           and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
           and call_name(n.value) == "smem"]
    out += [a.value.id for a in _buffer_operands(fn)]
    return list(dict.fromkeys(out))


def _global_reads(fn: ast.FunctionDef, buffers: list[str]) -> dict[str, int]:
    """Tensor names read by tile()/gather() (not shared buffers), with the rank of the box
    (gather reads rows: rank 2)."""
    out: dict[str, int] = {}
    for call in calls(fn, *READS):
        if call.args and isinstance(call.args[0], ast.Name) and call.args[0].id not in buffers:
            if call_name(call) == "tile" and len(call.args) >= 2 and \
                    isinstance(call.args[1], ast.Tuple):
                out.setdefault(call.args[0].id, len(call.args[1].elts))
            elif call_name(call) == "gather":
                out.setdefault(call.args[0].id, 2)
    return out


def operand_tensor(ctx) -> Iterator[Edit]:
    buffers = _buffers(ctx.fn)
    ranks = _global_reads(ctx.fn, buffers)
    for call in calls(ctx.fn, *READS):
        a = call.args[0] if call.args else None
        if isinstance(a, ast.Name) and a.id in ranks:
            for other, rank in ranks.items():
                if other != a.id and rank == ranks[a.id]:
                    yield Edit.of(a, other)
    for a in _buffer_operands(ctx.fn):
        if a.value.id in buffers:
            for other in buffers:
                if other != a.value.id:
                    yield Edit.of(a.value, other)


def _extent_names(fn: ast.FunctionDef) -> set[str]:
    return {a.id for call in calls(fn, "range", "schedule") for a in call.args
            if isinstance(a, ast.Name)}


def zero_trip(ctx) -> Iterator[Edit]:
    for call in calls(ctx.fn, "range", "schedule"):
        for a in call.args:
            if not isinstance(a, ast.Constant):
                yield Edit.of(a, "0")
    extents = _extent_names(ctx.fn)
    for node in body_nodes(ctx.fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and node.targets[0].id in extents and \
                isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.FloorDiv):
            mod = copy.deepcopy(node.value)
            mod.op = ast.Mod()
            yield Edit.of(node.value, text(mod))                        # K % BK
            nothing = copy.deepcopy(node.value)
            nothing.left = ast.Constant(0)
            yield Edit.of(node.value, text(nothing))                    # 0 // BK


def extent_compare(ctx) -> Iterator[Edit]:
    for call in calls(ctx.fn, "range", "schedule"):
        for a in call.args:
            if isinstance(a, ast.BinOp) and isinstance(a.op, ast.FloorDiv):
                yield Edit.of(a, text(ast.Compare(copy.deepcopy(a.left), [ast.Gt()],
                                                  [copy.deepcopy(a.right)])))


def _roles(fn: ast.FunctionDef) -> Iterator[ast.With]:
    for node in body_nodes(fn):
        if isinstance(node, ast.With) and len(node.items) == 1 and \
                call_name(node.items[0].context_expr) == "role":
            yield node


def _insert_before(stmt: ast.stmt, line: str) -> Edit:
    """`line` on its own line just above `stmt`, at its indentation."""
    return Edit(stmt.lineno, stmt.col_offset, stmt.lineno, stmt.col_offset,
                f"{line}\n{' ' * stmt.col_offset}")


def sync_in_role(ctx) -> Iterator[Edit]:
    for role in _roles(ctx.fn):
        yield _insert_before(role.body[0], "sync_block()")
        loop = next((n for n in ast.walk(role) if isinstance(n, ast.For)), None)
        if loop is not None:
            yield _insert_before(loop.body[0], "sync_block()")


def walk_order(ctx) -> Iterator[Edit]:
    for call in calls(ctx.fn, "schedule"):
        order = next((kw for kw in call.keywords if kw.arg == "order"), None)
        group = next((kw for kw in call.keywords if kw.arg == "group"), None)
        current = order.value.value if order is not None and \
            isinstance(order.value, ast.Constant) else "row_major"
        for other in ORDERS:
            if other == current:
                continue
            m = copy.deepcopy(call)
            m.keywords = [kw for kw in m.keywords if kw.arg not in ("order", "group")] + \
                [ast.keyword("order", ast.Constant(other))]
            if other == "grouped":
                m.keywords.append(ast.keyword("group", ast.Constant(
                    group.value.value if group is not None else 8)))
            yield Edit.of(call, ast.unparse(m))
        if group is not None and isinstance(group.value, ast.Constant):
            yield Edit.of(group.value, str(max(1, group.value.value // 2)))
    for outer in ast.walk(ctx.fn):
        if isinstance(outer, ast.For) and outer.body and isinstance(outer.body[0], ast.For):
            inner = outer.body[0]
            first = inner.body[0]
            if inner.lineno != outer.lineno + 1 or first.lineno != inner.lineno + 1:
                continue
            if {n.id for n in ast.walk(inner.iter) if isinstance(n, ast.Name)} & \
                    {n.id for n in ast.walk(outer.target) if isinstance(n, ast.Name)}:
                continue                     # the inner extent depends on the outer index
            head_o, head_i = (ast.unparse(f).split("\n")[0] for f in (outer, inner))
            yield Edit(outer.lineno, outer.col_offset, first.lineno, first.col_offset,
                       f"{head_i}\n{' ' * inner.col_offset}{head_o}\n{' ' * first.col_offset}")


def acc_reset(ctx) -> Iterator[Edit]:
    for call in calls(ctx.fn, "fragment"):
        if any(kw.arg == "init" for kw in call.keywords):
            m = copy.deepcopy(call)
            m.keywords = [kw for kw in m.keywords if kw.arg != "init"]
            yield Edit.of(call, ast.unparse(m))


GUARDED = ("wgmma", "tma_load", "store", "atomic_add")


def step_guard(ctx) -> Iterator[Edit]:
    for loop in ast.walk(ctx.fn):
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)):
            continue
        var = loop.target.id
        for stmt in loop.body:
            if isinstance(stmt, ast.Expr) and call_name(stmt.value) in GUARDED:
                pad = " " * (stmt.col_offset + 4)
                for cond in (f"{var} % 2 == 0", f"{var} > 0"):
                    yield Edit.of(stmt, f"if {cond}:\n{pad}{ast.unparse(stmt)}")


SOUNDNESS_OPERATORS = {
    "operand_tensor": operand_tensor, "zero_trip": zero_trip, "extent_compare": extent_compare,
    "sync_in_role": sync_in_role, "walk_order": walk_order, "acc_reset": acc_reset,
    "step_guard": step_guard,
}
