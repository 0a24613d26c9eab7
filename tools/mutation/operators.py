"""The mutation operators. Each takes a Context (the kernel function's AST and what is
known about its names) and yields Edits (edit.py); one operator, one kind of mistake:

- coord_offset:  a tile() coordinate +-1                 tile(A, .., (tm, k + 1))
- coord_swap:    tile() coordinates swapped              (k, tm) for (tm, k)
- coord_name:    a tile() coordinate replaced by another index variable (tn for tm)
- loop_bound:    range()/schedule() extents +-1
- index_arith:   + <-> - in index arithmetic; a literal in a BinOp/Compare +-1
- parity:        wait parity: drop/add `^ 1`, (g // S) & 1 -> g & 1, +1 phase, 0 <-> 1
- stage_index:   g % S -> (g + 1) % S, (g - 1) % S, k % S, g % (S - 1); x[s] -> x[(s + 1) % S]
- stage_count:   smem(stages=S +- 1), mbarrier(S +- 1), the S default +- 1
- layout:        swizzle "128B" <-> "64B"/"32B"/"none"; b_major flipped/dropped/added;
                 accumulator layout of another width; convert_layout dropped
- drop_stmt:     a fence, wait, arrive, wgmma_wait/commit/fence, expect_tx, tma_load,
                 assign, store or sync dropped (-> pass); an elect_one() unwrapped
- barrier_count: mbarrier_init count +-1; an expect_tx byte count missing one operand
- wgmma_depth:   wgmma_wait(n) -> n +- 1
- reduction:     row_max <-> row_sum; the running max dropped; a state name swapped
                 (m_new <-> m_i, masked <-> scores, ... per target)

and, from operators_soundness.py, the classes of issue 19: operand_tensor, zero_trip,
extent_compare, sync_in_role, walk_order, acc_reset, step_guard.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Callable, Iterator

from tools.mutation.ints import int_names, is_int_expr, module_int_constants
from tools.mutation.edit import Edit
from tools.mutation.operators_soundness import SOUNDNESS_OPERATORS
from tools.mutation.sites import (body_nodes, call_name, calls, loop_vars, plus,
                                  statements, text)


@dataclass
class Context:
    fn: ast.FunctionDef
    ints: set[str]
    loops: dict[int, str]
    stage: str = "S"
    overridden: frozenset = frozenset()
    name_swaps: tuple = ()          # ((old, new), ...) for the reduction operator

    @classmethod
    def build(cls, tree: ast.Module, fn: ast.FunctionDef, target) -> "Context":
        return cls(fn, int_names(fn, module_int_constants(tree)), loop_vars(fn),
                   getattr(target, "stage", "S"), frozenset(getattr(target, "overrides", {})),
                   tuple(getattr(target, "name_swaps", ())))

    def is_int(self, node: ast.AST) -> bool:
        return is_int_expr(node, self.ints)


def _tile_coords(ctx: Context) -> Iterator[ast.expr]:
    for call in calls(ctx.fn, "tile"):
        if len(call.args) >= 3 and isinstance(call.args[2], ast.Tuple):
            yield from call.args[2].elts


def coord_offset(ctx: Context) -> Iterator[Edit]:
    for e in _tile_coords(ctx):
        for d in (1, -1):
            yield Edit.of(e, text(plus(copy.deepcopy(e), d)))


def coord_swap(ctx: Context) -> Iterator[Edit]:
    for call in calls(ctx.fn, "tile"):
        if len(call.args) >= 3 and isinstance(call.args[2], ast.Tuple):
            elts = call.args[2].elts
            if len(elts) == 2 and ast.unparse(elts[0]) != ast.unparse(elts[1]):
                swapped = ast.Tuple([copy.deepcopy(elts[1]), copy.deepcopy(elts[0])], ast.Load())
                yield Edit.of(call.args[2], text(swapped))


INDEX_VARS_MAX = 6


def coord_name(ctx: Context) -> Iterator[Edit]:
    """A coordinate that is an index variable, replaced by another one in scope."""
    stage_loops = {f.target.id for f in ast.walk(ctx.fn) if isinstance(f, ast.For)
                   and isinstance(f.target, ast.Name) and call_name(f.iter) == "range"
                   and ast.unparse(f.iter.args[0]) == ctx.stage}
    index_vars = [v for v in dict.fromkeys(ctx.loops.values()) if v not in stage_loops] + \
        [n.targets[0].id for n in ast.walk(ctx.fn) if isinstance(n, ast.Assign)
         and call_name(n.value) in ("block_id", "warpgroup_index")]
    schedule_vars = [n.id for f in ast.walk(ctx.fn) if isinstance(f, ast.For)
                     and isinstance(f.target, ast.Tuple) for n in f.target.elts[1:]
                     if isinstance(n, ast.Name)]
    index_vars = list(dict.fromkeys(index_vars + schedule_vars))[:INDEX_VARS_MAX]
    for e in _tile_coords(ctx):
        if isinstance(e, ast.Name) and e.id in index_vars:
            for other in index_vars:
                if other != e.id and _in_scope(ctx, e, other):
                    yield Edit.of(e, other)


def _in_scope(ctx: Context, node: ast.AST, name: str) -> bool:
    """`name` is bound before `node` on a path that encloses it (assigned earlier, or a
    loop variable of an enclosing loop)."""
    for f in ast.walk(ctx.fn):
        if isinstance(f, ast.For) and name in {n.id for n in ast.walk(f.target)
                                                if isinstance(n, ast.Name)}:
            if any(sub is node for sub in ast.walk(f)):
                return True
        if isinstance(f, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                             for t in f.targets):
            if f.lineno < node.lineno and _encloses_same_block(ctx.fn, f, node):
                return True
    return False


def _encloses_same_block(fn: ast.FunctionDef, stmt: ast.stmt, node: ast.AST) -> bool:
    """`stmt` sits in a statement list that (transitively) contains `node`."""
    for parent in ast.walk(fn):
        for field_name in ("body", "orelse"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and stmt in block:
                return any(sub is node for s in block for sub in ast.walk(s))
    return False


def loop_bound(ctx: Context) -> Iterator[Edit]:
    for call in calls(ctx.fn, "range", "schedule"):
        for a in call.args:
            if not (call_name(call) == "range" and isinstance(a, ast.Constant)):
                for d in (1, -1):
                    yield Edit.of(a, text(plus(copy.deepcopy(a), d)))


def index_arith(ctx: Context) -> Iterator[Edit]:
    for node in body_nodes(ctx.fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and \
                ctx.is_int(node):
            flipped = copy.deepcopy(node)
            flipped.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            yield Edit.of(node, text(flipped))
        operands = []
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        for o in operands:
            if isinstance(o, ast.Constant) and type(o.value) is int:
                for d in (1, -1):
                    yield Edit.of(o, str(o.value + d))


def parity(ctx: Context) -> Iterator[Edit]:
    for call in calls(ctx.fn, "wait"):
        if len(call.args) < 2:
            continue
        p = call.args[1]
        if isinstance(p, ast.BinOp) and isinstance(p.op, ast.BitXor) and \
                isinstance(p.right, ast.Constant) and p.right.value == 1:
            yield Edit.of(p, text(copy.deepcopy(p.left)))            # drop ^ 1
        else:
            flipped = ast.BinOp(copy.deepcopy(p), ast.BitXor(), ast.Constant(1))
            yield Edit.of(p, text(flipped))                           # add ^ 1
        if isinstance(p, ast.Constant) and p.value in (0, 1):
            continue
        for sub in ast.walk(p):
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.BitAnd) and \
                    isinstance(sub.left, ast.BinOp) and isinstance(sub.left.op, ast.FloorDiv):
                inner = sub.left.left
                yield Edit.of(sub, text(ast.BinOp(copy.deepcopy(inner), ast.BitAnd(),
                                                  ast.Constant(1))))   # g & 1
                shifted = ast.BinOp(plus(copy.deepcopy(sub.left), 1), ast.BitAnd(),
                                    ast.Constant(1))
                yield Edit.of(sub, text(shifted))                       # phase + 1
                var = ctx.loops.get(id(call))
                if var and not (isinstance(inner, ast.Name) and inner.id == var):
                    by_k = copy.deepcopy(sub)
                    by_k.left.left = ast.Name(var, ast.Load())
                    yield Edit.of(sub, text(by_k))                      # (k // S) & 1


def stage_index(ctx: Context) -> Iterator[Edit]:
    stage = ctx.stage
    for node in body_nodes(ctx.fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and \
                isinstance(node.right, ast.Name) and node.right.id == stage:
            for d in (1, -1):
                m = copy.deepcopy(node)
                m.left = plus(m.left, d)
                yield Edit.of(node, text(m))
            var = ctx.loops.get(id(node))
            if var and ast.unparse(node.left) != var:
                m = copy.deepcopy(node)
                m.left = ast.Name(var, ast.Load())
                yield Edit.of(node, text(m))
            m = copy.deepcopy(node)
            m.right = plus(m.right, -1)
            yield Edit.of(node, text(m))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) and \
                node.slice.id in ctx.ints and isinstance(node.value, ast.Name):
            shifted = ast.BinOp(plus(copy.deepcopy(node.slice), 1), ast.Mod(),
                                ast.Name(stage, ast.Load()))
            yield Edit.of(node.slice, text(shifted))


def stage_count(ctx: Context) -> Iterator[Edit]:
    stage = ctx.stage
    for call in calls(ctx.fn, "smem"):
        for kw in call.keywords:
            if kw.arg == "stages":
                for d in (1, -1):
                    yield Edit.of(kw.value, text(plus(copy.deepcopy(kw.value), d)))
    for call in calls(ctx.fn, "mbarrier"):
        if call.args and ast.unparse(call.args[0]) == stage:
            for d in (1, -1):
                yield Edit.of(call.args[0], text(plus(copy.deepcopy(call.args[0]), d)))
    if stage in ctx.overridden:
        return
    args = ctx.fn.args
    for a, default in zip(args.args[len(args.args) - len(args.defaults):], args.defaults):
        if a.arg == stage and isinstance(default, ast.Constant):
            for d in (1, -1):
                if default.value + d >= 1:
                    yield Edit.of(default, str(default.value + d))


SWIZZLES = ("128B", "64B", "32B", "none")


def layout(ctx: Context) -> Iterator[Edit]:
    for call in calls(ctx.fn, "smem"):
        for kw in call.keywords:
            if kw.arg == "swizzle" and isinstance(kw.value, ast.Constant):
                for other in SWIZZLES:
                    if other != kw.value.value:
                        yield Edit.of(kw.value, repr(other))
    for call in calls(ctx.fn, "wgmma"):
        major = [kw for kw in call.keywords if kw.arg == "b_major"]
        if major and not isinstance(major[0].value, ast.Constant):
            continue                 # a helper's parameter: the kernel's call site sets it
        if major:
            flip = "k" if major[0].value.value == "mn" else "mn"
            yield Edit.of(major[0].value, repr(flip))
            head = ast.unparse(call).split(", b_major=")[0]
            yield Edit.of(call, head + ")")
        else:
            src = ast.unparse(call)
            yield Edit.of(call, src[:-1] + ", b_major='mn')")
    for call in calls(ctx.fn, "fragment"):
        if len(call.args) >= 3 and isinstance(call.args[2], ast.Constant) and \
                isinstance(call.args[2].value, str):
            name = call.args[2].value
            if "m64n" in name:
                width = int("".join(ch for ch in name.split("m64n")[1] if ch.isdigit()))
                for w in (width // 2, width * 2):
                    if 8 <= w <= 256:
                        yield Edit.of(call.args[2], repr(name.replace(f"m64n{width}", f"m64n{w}")))
    for call in calls(ctx.fn, "convert_layout"):
        yield Edit.of(call, text(copy.deepcopy(call.args[0])))
    for call in calls(ctx.fn, "load"):
        if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
            yield Edit.of(call.args[1], repr("wgmma_acc_m64n64"))


DROPPABLE = ("fence_mbarrier_init", "sync_block", "wait", "arrive", "wgmma_fence",
             "wgmma_commit", "wgmma_wait", "expect_tx", "tma_load", "assign", "store",
             "mbarrier_init")


def drop_stmt(ctx: Context) -> Iterator[Edit]:
    for stmt in statements(ctx.fn):
        if isinstance(stmt, ast.Expr) and call_name(stmt.value) in DROPPABLE:
            yield Edit(stmt.lineno, stmt.col_offset, stmt.end_lineno, stmt.end_col_offset,
                       "pass")
        if isinstance(stmt, ast.With) and len(stmt.items) == 1 and \
                call_name(stmt.items[0].context_expr) == "elect_one":
            indent = stmt.body[0].col_offset - stmt.col_offset
            yield Edit(stmt.lineno, 0, stmt.end_lineno, 0, "", dedent=indent)


def barrier_count(ctx: Context) -> Iterator[Edit]:
    for call in calls(ctx.fn, "mbarrier_init"):
        if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
            n = call.args[1].value
            for m in (n + 1, n - 1):
                if m >= 1:
                    yield Edit.of(call.args[1], str(m))
    for call in calls(ctx.fn, "expect_tx"):
        if len(call.args) >= 2 and isinstance(call.args[1], ast.BinOp) and \
                isinstance(call.args[1].op, ast.Add):
            total = call.args[1]
            yield Edit.of(total, text(copy.deepcopy(total.left)))
            yield Edit.of(total, text(copy.deepcopy(total.right)))


def wgmma_depth(ctx: Context) -> Iterator[Edit]:
    for call in calls(ctx.fn, "wgmma_wait"):
        if call.args and isinstance(call.args[0], ast.Constant):
            n = call.args[0].value
            for m in (n + 1, n - 1):
                if m >= 0:
                    yield Edit.of(call.args[0], str(m))


REDUCTIONS = {"row_max": "row_sum", "row_sum": "row_max"}


def reduction(ctx: Context) -> Iterator[Edit]:
    for call in calls(ctx.fn, *REDUCTIONS):
        yield Edit.of(call.func, REDUCTIONS[call_name(call)])
    for call in calls(ctx.fn, "maximum"):
        for a in call.args:
            if call_name(a) == "row_max":
                yield Edit.of(call, text(copy.deepcopy(a)))
    for old, new in ctx.name_swaps:
        for node in body_nodes(ctx.fn):
            if isinstance(node, ast.Name) and node.id == old and isinstance(node.ctx, ast.Load):
                yield Edit.of(node, new)


OPERATORS: dict[str, Callable[[Context], Iterator[Edit]]] = {
    "parity": parity, "stage_index": stage_index, "stage_count": stage_count,
    "drop_stmt": drop_stmt, "barrier_count": barrier_count, "wgmma_depth": wgmma_depth,
    "layout": layout, "coord_swap": coord_swap, "coord_offset": coord_offset,
    "coord_name": coord_name, "loop_bound": loop_bound, "reduction": reduction,
    "index_arith": index_arith,
}
OPERATORS.update(SOUNDNESS_OPERATORS)     # appended: the ids of the operators above stay put
