"""The AST visitor: one method per Python construct, turning a kernel body into IR.

Names are single-assignment; compile-time values (ints, floats, strings, tuples, dtypes)
are folded as they are met, everything else becomes an SSA value of the IR."""

from __future__ import annotations

import ast
import difflib
import inspect
from typing import Any

import argus.lang as lang
from argus.ir.nodes import Block, Kernel, Launch, Loc, Role, Schedule, Value
from argus.ir.ops.arith import SEMANTICS
from argus.ir.schedule import ORDERS as SCHEDULE_ORDERS
from argus.ir.types import (DTYPES, INDEX, PRED, BarrierArrayType, BarrierType, FragmentType,
                            ScalarType, SmemBufferType, SmemTileType)
from argus.limits import REGISTER_GRANULE, SETMAXNREG_MAX, SETMAXNREG_MIN

from .builder import Builder
from .errors import DSLError
from .header import Header, kernel_decorator, surface_name
from .helpers import Frame, Helper, ModuleFunctions, bind_arguments, call_notes, fill_defaults
from .rules import RULES, Args
from .rules.base import describe
from .rules.math import elementwise
from .tag_predicates import PredicateTranslator

SURFACE = lang.surface_functions()
ARITH = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv",
         ast.Mod: "mod", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
         ast.LShift: "shl", ast.RShift: "shr"}
CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
# compile-time operands fold through the op table's semantics (argus/ir/ops/arith.py): what
# the interpreter computes and the generated code means, floor division Python's
FOLD = SEMANTICS


def _is_pred(x) -> bool:
    return isinstance(x, Value) and x.type == PRED


def _known(x) -> bool:
    """A compile-time bool or number (a module constant, a folded comparison): its truth
    decides or drops out of `and` / `or`."""
    return isinstance(x, (bool, int, float)) and not isinstance(x, Value)
UNSUPPORTED_STMT = {
    ast.While: "use `for i in range(n)` with a compile-time or symbolic bound",
    ast.Try: "kernels cannot catch exceptions; state preconditions with assume(...)",
    ast.Return: "kernels return nothing; store results with store() or tma_store()",
    ast.Raise: "state preconditions with assume(...)",
    ast.Assert: "use assume(...) for preconditions or tag_assert(...) for invariants",
    ast.Import: "import at module level",
    ast.ImportFrom: "import at module level",
    ast.Global: "kernels cannot rebind module names",
    ast.Nonlocal: "kernels cannot rebind outer names",
    ast.Delete: "values live until the end of their region",
    ast.FunctionDef: "define helpers at module level, marked @helper; kernels call them "
                     "like functions and Argus inlines them",
    ast.AsyncFunctionDef: "define helpers at module level, marked @helper",
    ast.ClassDef: "define classes at module level",
    ast.Break: "loops run their full range; use `if` inside the body",
    ast.Continue: "use `if` around the rest of the body",
    ast.AugAssign: "names are single-assignment; bind a new name, or assign(frag, ...) "
                   "for loop-carried fragments",
    ast.AnnAssign: "bind with a plain `name = expr`",
}
UNSUPPORTED_EXPR = {
    ast.Lambda: "define the computation inline",
    ast.ListComp: "comprehensions are not supported; use a for loop",
    ast.SetComp: "comprehensions are not supported; use a for loop",
    ast.DictComp: "comprehensions are not supported; use a for loop",
    ast.GeneratorExp: "comprehensions are not supported; use a for loop",
    ast.IfExp: "use select(cond, a, b) for values or an `if` statement",
    ast.List: "use a tuple",
    ast.Dict: "use keyword arguments",
    ast.Set: "use a tuple",
    ast.NamedExpr: "bind with a separate assignment",
    ast.Await: "kernels are not async Python",
    ast.Yield: "kernels are not generators",
    ast.Starred: "pass arguments explicitly",
}


class KernelVisitor:
    def __init__(self, fn: ast.FunctionDef, filename: str, lines: list[str],
                 module_constants: dict[str, Any], functions: ModuleFunctions | None = None):
        self.fn, self.filename, self.lines = fn, filename, lines
        self.constants: dict[str, Any] = dict(module_constants)
        self.functions = functions or ModuleFunctions()
        self.helpers: dict[str, Helper] = self.functions.helpers
        self.frames: list[Frame] = []     # the helper calls being inlined, outermost first
        self.b = Builder()
        self.scopes: list[dict[str, Any]] = [{}]
        self.in_role = False
        self.in_elect = False
        self.roles: list[Role] = []
        self.schedules: list[Schedule] = []
        # the bodies of the schedules being parsed, innermost last: (body, step counter),
        # what `walked` sums over (rules/structure.py)
        self.schedule_bodies: list[tuple[Block, Value]] = []
        self.header = Header(self)

    # ---- diagnostics and emission -------------------------------------------------------
    def loc(self, node: ast.AST) -> Loc:
        return Loc(self.filename, getattr(node, "lineno", self.fn.lineno),
                   getattr(node, "col_offset", 0) + 1)

    def error(self, node: ast.AST, message: str, hint: str = "") -> DSLError:
        loc = self.loc(node)
        line = self.lines[loc.line - 1] if 0 < loc.line <= len(self.lines) else ""
        # every diagnostic says where to look for the fix, even one without its own hint
        return DSLError(message, loc, hint or "docs/dsl.md lists what a kernel may contain "
                        "and what each argus.lang function takes", line, call_notes(self.frames))

    def emit(self, opcode, operands, node, result=None, attrs=None, regions=()):
        op = self.b.emit(opcode, operands, self.loc(node), result, attrs, regions=regions)
        return op.results[0] if op.results else None

    def binop(self, op: str, x, y, node):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if op in ("floordiv", "mod") and y == 0:
                raise self.error(node, "division by zero in a compile-time expression")
            return FOLD[op](x, y)
        if isinstance(x, str) and isinstance(y, str) and op in ("eq", "ne"):
            return FOLD[op](x, y)     # compile-time strings: `if EPILOGUE == "smem_tma":`
        for v in (x, y):
            if not (isinstance(v, (int, float)) or (isinstance(v, Value)
                                                    and isinstance(v.type, ScalarType))):
                raise self.error(node, f"cannot apply {op} to {describe(v)}")
        result = PRED if op in CMP.values() or op in ("land", "lor") else INDEX
        return self.emit(f"arith.{op}", (x, y), node, result)

    # ---- names --------------------------------------------------------------------------
    def lookup(self, node: ast.Name):
        name = node.id
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.constants:
            return self.constants[name]
        if name in DTYPES and name not in ("index", "pred"):
            return DTYPES[name]
        if name == "inf":
            return float("inf")
        if name in self.helpers:
            raise self.error(node, f"{name} is a helper, not a value",
                             f"call it: {name}(...); a helper is inlined where it is called, "
                             "so it cannot be passed, stored or returned")
        if name in SURFACE or name in ("range", "kernel", "helper"):
            raise self.error(node, f"{name} is a function", f"call it: {name}(...)")
        known = [n for s in self.scopes for n in s] + list(self.constants) + list(SURFACE) + \
            list(self.helpers)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else \
            "define it before use, as a parameter, a const parameter or a module constant"
        raise self.error(node, f"unknown name {name!r}", hint)

    def bind(self, node: ast.Name, value):
        name = node.id
        if any(name in s for s in self.scopes) or name in SURFACE:
            raise self.error(node, f"{name!r} is already bound; names in a kernel are "
                             "single-assignment", "use a new name, or assign(frag, value) to "
                             "update a loop-carried fragment")
        if name in self.helpers:
            raise self.error(node, f"{name!r} is the name of a helper", "use a new name")
        if isinstance(value, Value) and not any(value is v for s in self.scopes
                                                for v in s.values()):
            # name the anonymous result of the expression just emitted; a value already
            # bound (a helper's parameter given `j - nf`) keeps its own: renaming its op's
            # result would leave the parameter naming a value nothing defines
            value = self.b.rename(value, name)
        self.scopes[-1][name] = value

    def static(self, node: ast.AST, what: str = "a value"):
        value = self.expr(node)
        if isinstance(value, Value):
            raise self.error(node, f"{what} must be known at compile time, got {describe(value)}",
                             "use literals, const parameters and module constants")
        return value

    # ---- kernel -------------------------------------------------------------------------
    def kernel(self) -> Kernel:
        fn = self.fn
        params, symbols, constants = self.header.params(fn)
        launch = self.header.launch(kernel_decorator(fn), symbols)
        self.scopes[0].update({p.name: p for p in params})
        self.scopes[0].update(symbols)
        self.block_threads = launch["block"]
        self.cluster = tuple(launch["cluster"])
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]   # docstring
        self.statements(body)
        return Kernel(fn.name, tuple(params), tuple(symbols.values()), constants,
                      Launch(launch["grid"], launch["block"], launch["cluster"],
                             tuple(self.roles), tuple(self.schedules),
                             launch["blocks_per_sm"], launch["block_order"]),
                      self.b.root, self.loc(fn), self._arguments(params))

    def _arguments(self, params) -> tuple[str, ...]:
        """The launch arguments when size parameters are among them, else () (the params)."""
        arguments = tuple(self.header.arguments)
        return arguments if arguments != tuple(p.name for p in params) else ()

    # ---- statements ---------------------------------------------------------------------
    def statements(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            method = getattr(self, f"visit_{type(stmt).__name__}", None)
            if method is None:
                hint = UNSUPPORTED_STMT.get(type(stmt), "write kernels with assignments, calls, "
                                            "for, if and with")
                raise self.error(stmt, f"unsupported Python in a kernel: "
                                 f"{type(stmt).__name__.lower()} statement", hint)
            method(stmt)

    def visit_Pass(self, node: ast.Pass) -> None:
        pass

    def visit_Expr(self, node: ast.Expr) -> None:
        if not isinstance(node.value, ast.Call):
            raise self.error(node, "this expression has no effect", "call an op or bind a name")
        self.expr(node.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment is not supported", "bind one name")
        target = node.targets[0]
        if isinstance(target, ast.Name):
            self.bind(target, self._returned(node.value, self.expr(node.value)))
            return
        if isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
            value = self._returned(node.value, self.expr(node.value))
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error(node.value, f"cannot unpack {describe(value)} into "
                                 f"{len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.bind(t, v)
            return
        hint = "use assign(frag, value) to overwrite a fragment" if isinstance(
            target, ast.Subscript) else "bind a plain name"
        raise self.error(target, f"cannot assign to {ast.unparse(target)!r}", hint)

    def _body(self, block: Block, stmts, bindings: dict[str, Any] | None = None) -> Block:
        self.scopes.append(dict(bindings or {}))
        try:
            with self.b.region(block):
                self.statements(stmts)
        finally:
            self.scopes.pop()
        return block

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.error(node, "for ... else is not supported", "drop the else clause")
        it = node.iter
        name = surface_name(it.func) if isinstance(it, ast.Call) else None
        if name == "range":
            self._for_range(node, it)
        elif name == "schedule":
            self._for_schedule(node, it)
        elif name == "pipeline":
            self._for_pipeline(node, it)
        else:
            raise self.error(it, f"cannot loop over {ast.unparse(it)!r}",
                             "loop over range(...), schedule(...) or pipeline(...)")

    def _target_names(self, target: ast.expr, count: int, usage: str) -> list[ast.Name]:
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        if len(names) != count or not all(isinstance(n, ast.Name) for n in names):
            raise self.error(target, f"this loop binds {count} name(s)", usage)
        for n in names:
            if any(n.id in s for s in self.scopes):
                raise self.error(n, f"loop variable {n.id!r} shadows an existing name",
                                 "pick a new name")
        return names

    def _for_range(self, node: ast.For, it: ast.Call) -> None:
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range takes 1 to 3 positional arguments")
        bounds = [self.expr(a) for a in it.args]
        for a, v in zip(it.args, bounds):
            if not (isinstance(v, int) or (isinstance(v, Value) and v.type == INDEX)):
                raise self.error(a, f"range bound must be an integer, got {describe(v)}")
        start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (
            (bounds[0], bounds[1], 1) if len(bounds) == 2 else tuple(bounds))
        if isinstance(step, int) and step <= 0:
            raise self.error(it, f"range step must be positive, got {step}")
        (var,) = self._target_names(node.target, 1, "for k in range(n):")
        arg = self.b.fresh(var.id, INDEX)
        block = self._body(Block([], (arg,)), node.body, {var.id: arg})
        self.emit("for", (start, stop, step), node, regions=(block,))

    def _for_pipeline(self, node: ast.For, it: ast.Call) -> None:
        """Expands to `for k in range(n)` with g = start + k, s = g % S, phase = (g // S) & 1."""
        a = Args(self, it, "pipeline", self.bind_call(it, "pipeline"))
        n, start = a.scalar("n"), a.scalar("start")
        stages = a.static_int("stages", minimum=1)
        k, s, phase = self._target_names(node.target, 3,
                                         "for k, s, phase in pipeline(KT, stages=S):")
        arg = self.b.fresh(k.id, INDEX)
        block = Block([], (arg,))
        with self.b.region(block):
            g = self.binop("add", start, arg, it) if start != 0 else arg
            stage = self.b.rename(self.binop("mod", g, stages, it), s.id)
            parity = self.b.rename(self.binop("and", self.binop("floordiv", g, stages, it), 1,
                                              it), phase.id)
        self._body(block, node.body, {k.id: arg, s.id: stage, phase.id: parity})
        self.emit("for", (0, n, 1), node, regions=(block,))

    def _for_schedule(self, node: ast.For, it: ast.Call) -> None:
        extents = [self.expr(a) for a in it.args]
        if not extents:
            raise self.error(it, "schedule needs the tile-grid extents", "schedule(M // BM, N // BN)")
        order, group, by = "row_major", 1, "block"
        for kw in it.keywords:
            if kw.arg == "by":
                by = self.static(kw.value, what="by")
                if by not in ("block", "cluster"):
                    raise self.error(kw.value, f"schedule by={by!r} is neither 'block' nor "
                                     "'cluster'", "by=\"cluster\": the blocks of a cluster "
                                     "visit the same steps, the grid's clusters share the tiles")
            elif kw.arg == "order":
                order = self.static(kw.value, what="order")
                if order not in SCHEDULE_ORDERS:
                    raise self.error(kw.value, f"unknown schedule order {order!r}",
                                     f"one of {', '.join(SCHEDULE_ORDERS)}")
            elif kw.arg == "group":
                group = self.static(kw.value, what="group")
                if not isinstance(group, int) or group < 1:
                    raise self.error(kw.value, f"group must be a positive int, got {group!r}")
            else:
                raise self.error(kw, f"unknown schedule argument {kw.arg!r}",
                                 "order=, group=, by=")
        if order != "row_major" and len(extents) != 2:
            raise self.error(it, f"a {order} schedule needs a 2-D tile grid, got "
                             f"{len(extents)} extent(s)", "order=\"row_major\" for other ranks")
        if order == "row_major" and group != 1:
            raise self.error(it, "a row_major schedule has no group", "order=\"grouped\"")
        names = self._target_names(node.target, 1 + len(extents),
                                   "for i, tm, tn in schedule(M // BM, N // BN):")
        args = tuple(self.b.fresh(n.id, INDEX) for n in names)
        block = Block([], args)
        self.schedule_bodies.append((block, args[0]))
        try:
            self._body(block, node.body, {n.id: a for n, a in zip(names, args)})
        finally:
            self.schedule_bodies.pop()
        attrs = {"order": order, "group": group}
        if by == "cluster":
            attrs["by"] = "cluster"
        self.emit("schedule", tuple(extents), node, attrs=attrs, regions=(block,))
        schedule = Schedule(tuple(str(e) if isinstance(e, int) else self.header.fold_text(a)
                                             for e, a in zip(extents, it.args)),
                            order, group, self.loc(node))
        if not any((s.tiles, s.order, s.group) == (schedule.tiles, order, group)
                   for s in self.schedules):
            self.schedules.append(schedule)

    def visit_If(self, node: ast.If) -> None:
        cond = self.expr(node.test)
        if isinstance(cond, (bool, int)) and not isinstance(cond, Value):
            self.statements(node.body if cond else node.orelse)   # compile-time if
            return
        if not (isinstance(cond, Value) and cond.type == PRED):
            raise self.error(node.test, f"if needs a uniform condition, got {describe(cond)}",
                             "for per-element choices use select(cond, a, b)")
        then = self._body(Block(), node.body)
        other = self._body(Block(), node.orelse)
        self.emit("if", (cond,), node, regions=(then, other))

    def visit_With(self, node: ast.With) -> None:
        if len(node.items) != 1 or node.items[0].optional_vars is not None:
            raise self.error(node, "with takes exactly one role(...) or elect_one(), without as")
        call = node.items[0].context_expr
        name = surface_name(call.func) if isinstance(call, ast.Call) else None
        if name == "role":
            self._role(node, call)
        elif name == "elect_one":
            a = Args(self, call, "elect_one", self.bind_call(call, "elect_one"))
            scope = a.static_str("scope", ("block", "warpgroup", "warp"))
            outer, self.in_elect = self.in_elect, True
            try:
                block = self._body(Block(), node.body)
            finally:
                self.in_elect = outer
            self.emit("elect_one", (), node, attrs={"scope": scope}, regions=(block,))
        else:
            raise self.error(call, f"unsupported context {ast.unparse(call)!r}",
                             "with role(...) or with elect_one()")

    def _role(self, node: ast.With, call: ast.Call) -> None:
        if self.in_role:
            raise self.error(call, "roles cannot be nested", "close the outer role first")
        bound = self.bind_call(call, "role")
        a = Args(self, call, "role", bound)
        name = a.get("name")
        if not isinstance(name, str) or not name.isidentifier():
            a.fail("name", f"a role name is an identifier string, got {name!r}")
        wgs = a.get("warpgroups")
        wgs = (wgs,) if isinstance(wgs, int) else wgs
        n_wg = self.block_threads // 128
        if not (isinstance(wgs, tuple) and wgs and all(isinstance(w, int) for w in wgs)):
            a.fail("warpgroups", f"warpgroups must be a tuple of ints, got {wgs!r}")
        for w in wgs:
            if not 0 <= w < n_wg:
                a.fail("warpgroups", f"warpgroup {w} does not exist: the block has "
                       f"{self.block_threads} threads ({n_wg} warpgroups)",
                       "raise block= in @kernel(...) or use a smaller index")
        for r in self.roles:
            if set(r.warpgroups) & set(wgs):
                a.fail("warpgroups", f"warpgroups {sorted(set(r.warpgroups) & set(wgs))} "
                       f"already run role {r.name}")
        regs = a.static_int("regs")
        if not SETMAXNREG_MIN <= regs <= SETMAXNREG_MAX or regs % REGISTER_GRANULE:
            a.fail("regs", f"setmaxnreg takes {SETMAXNREG_MIN}..{SETMAXNREG_MAX} in steps of "
                   f"{REGISTER_GRANULE}, got {regs}")
        self.in_role = True
        try:
            block = self._body(Block(), node.body)
        finally:
            self.in_role = False
        self.emit("role", (), node, attrs={"name": name, "warpgroups": tuple(wgs), "regs": regs},
                  regions=(block,))
        self.roles.append(Role(name, tuple(wgs), regs, self.loc(node)))

    # ---- expressions --------------------------------------------------------------------
    def expr(self, node: ast.AST):
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            hint = UNSUPPORTED_EXPR.get(type(node), "")
            raise self.error(node, f"unsupported Python in a kernel: {type(node).__name__} "
                             "expression", hint)
        return method(node)

    def expr_Constant(self, node: ast.Constant):
        if not isinstance(node.value, (int, float, str, bool, type(None))):
            raise self.error(node, f"unsupported constant {node.value!r}")
        return node.value

    def expr_Name(self, node: ast.Name):
        return self.lookup(node)

    def expr_IfExp(self, node: ast.IfExp):
        """`a if c else b` with c known at compile time: the branch c picks (the other is not
        evaluated), like an `if` on a constant. A runtime c is refused: select() says it."""
        test = self.expr(node.test)
        if isinstance(test, Value):
            raise self.error(node, f"`a if c else b` needs c known at compile time, got "
                             f"{describe(test)}", UNSUPPORTED_EXPR[ast.IfExp])
        return self.expr(node.body if test else node.orelse)

    def expr_JoinedStr(self, node: ast.JoinedStr):
        """An f-string over compile-time constants, folded: f"wgmma_acc_m64n{HD}"."""
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            value = self.expr(part.value)
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise self.error(part.value, f"an f-string in a kernel can only interpolate "
                                 f"compile-time constants; {ast.unparse(part.value)!r} is "
                                 f"{describe(value)}", "use a constant (a `const` parameter "
                                 "or a module-level NAME = literal)")
            spec = self.expr(part.format_spec) if part.format_spec is not None else ""
            parts.append(format(value, spec))
        return "".join(parts)

    def expr_Attribute(self, node: ast.Attribute):
        name = surface_name(node)
        if name in DTYPES and name not in ("index", "pred"):
            return DTYPES[name]
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id not in ("argus",):
            self.lookup(base)   # raises for unknown names
        raise self.error(node, f"attribute access {ast.unparse(node)!r} is not supported",
                         "kernels call surface functions; shapes are static in the types")

    def expr_Tuple(self, node: ast.Tuple):
        return tuple(self.expr(e) for e in node.elts)

    def expr_BinOp(self, node: ast.BinOp):
        x, y = self.expr(node.left), self.expr(node.right)
        frag = any(isinstance(v, Value) and isinstance(v.type, FragmentType) for v in (x, y))
        if frag:
            ops = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
            if type(node.op) not in ops:
                raise self.error(node, f"operator {type(node.op).__name__} is not defined on "
                                 "fragments", "fragments support + - * /, maximum, exp2, cast")
            return elementwise(self, node, ops[type(node.op)], x, y)
        if isinstance(node.op, ast.Div):
            if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y:
                return x / y
            raise self.error(node, "/ on integer scalars is ambiguous", "use // or %")
        if type(node.op) not in ARITH:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}")
        return self.binop(ARITH[type(node.op)], x, y, node)

    def expr_UnaryOp(self, node: ast.UnaryOp):
        x = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                return FOLD["neg"](x)
            if isinstance(x, Value) and isinstance(x.type, FragmentType):
                return self.emit("math.neg", (x,), node, x.type)
            return self.binop("sub", 0, x, node)
        if isinstance(node.op, ast.Not):
            if isinstance(x, bool):
                return FOLD["not"](x)
            if isinstance(x, Value) and x.type == PRED:
                return self.emit("arith.not", (x,), node, PRED)
        raise self.error(node, f"unsupported unary operator on {describe(x)}")

    def expr_Compare(self, node: ast.Compare):
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons are not supported", "a < b and b < c")
        op = type(node.ops[0])
        if op not in CMP:
            raise self.error(node, f"unsupported comparison {op.__name__}")
        x, y = self.expr(node.left), self.expr(node.comparators[0])
        if any(isinstance(v, Value) and isinstance(v.type, FragmentType) for v in (x, y)):
            return elementwise(self, node, CMP[op], x, y, pred=True)
        return self.binop(CMP[op], x, y, node)

    def expr_BoolOp(self, node: ast.BoolOp):
        """`and` / `or`, folded where a compile-time operand decides or drops out (a module
        constant beside a runtime predicate: `SKIP == 0 or n > 0` is `True` when SKIP is
        0, and `n > 0` otherwise), so a switched-off condition leaves no code."""
        op = "land" if isinstance(node.op, ast.And) else "lor"
        decides = op == "lor"              # True decides `or`, False decides `and`
        out = self.expr(node.values[0])
        for v in node.values[1:]:
            if _known(out) and bool(out) == decides:
                return out                 # the rest is never evaluated, as in Python
            y = self.expr(v)
            if _known(out):
                out = y                    # a neutral constant drops out: 0 or y, 1 and y
            elif _known(y) and _is_pred(out):
                out = bool(y) if bool(y) == decides else out    # p or 1: true; p and 1: p
            else:
                out = self.emit(f"arith.{op}", (out, y), node, PRED)
        return out

    def expr_Subscript(self, node: ast.Subscript):
        base = self.expr(node.value)
        index = self.expr(node.slice)
        if isinstance(base, tuple):
            if not isinstance(index, int) or not -len(base) <= index < len(base):
                raise self.error(node.slice, f"index {index!r} out of range for a tuple of "
                                 f"{len(base)}")
            return base[index]
        if isinstance(base, Value) and isinstance(base.type, (BarrierArrayType, SmemBufferType)):
            count = base.type.count if isinstance(base.type, BarrierArrayType) else base.type.stages
            if isinstance(index, tuple):
                raise self.error(node.slice, f"{base.name} takes one index (the stage)",
                                 "then tile(buf[s], box, coords) for a sub-tile")
            if isinstance(index, int) and not 0 <= index < count:
                raise self.error(node.slice, f"index {index} is out of range: {base.name} has "
                                 f"{count} entries", "stage = k % S")
            if not (isinstance(index, int) or (isinstance(index, Value) and index.type == INDEX)):
                raise self.error(node.slice, f"index must be an integer, got {describe(index)}")
            if isinstance(base.type, BarrierArrayType):
                return self.emit("mbarrier.at", (base, index), node, BarrierType(base.name))
            t = base.type
            return self.emit("smem.stage", (base, index), node,
                             SmemTileType(base.name, t.shape, t.dtype, t.swizzle))
        raise self.error(node, f"cannot index {describe(base)}",
                         "index smem buffers and mbarrier arrays by stage; tile tensors with "
                         "tile(A, box, coords)")

    def bind_call(self, node: ast.Call, name: str) -> dict[str, tuple[Any, ast.AST]]:
        sig = inspect.signature(SURFACE[name])
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.error(a, "*args is not supported", "pass arguments explicitly")
        for k in node.keywords:
            if k.arg is None:
                raise self.error(k, "**kwargs is not supported", "pass arguments explicitly")
        try:
            bound = sig.bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as e:
            raise self.error(node, f"{name}{sig}: {e}", f"see the docstring of argus.{name}")
        out: dict[str, tuple[Any, ast.AST]] = {}
        for pname, param in sig.parameters.items():
            if pname in bound.arguments:
                given = bound.arguments[pname]
                if param.kind is param.VAR_POSITIONAL:
                    out[pname] = (tuple(self.expr(g) for g in given),
                                  given[0] if given else node)
                elif param.kind is param.VAR_KEYWORD:
                    out[pname] = ({k: self.expr(v) for k, v in given.items()}, node)
                else:
                    out[pname] = (self.expr(given), given)
            elif param.default is not inspect.Parameter.empty:
                out[pname] = (param.default, node)
        return out

    def expr_Call(self, node: ast.Call):
        name = surface_name(node.func)
        if isinstance(node.func, ast.Name) and name in self.helpers \
                and not any(name in s for s in self.scopes):
            return self.inline(node, self.helpers[name])
        if name == self.fn.name and not self.frames:
            raise self.error(node, f"recursion: kernel {name} calls itself",
                             "kernels cannot call kernels; write the loop explicitly")
        if isinstance(node.func, ast.Name) and name in self.functions.kernels:
            raise self.error(node, f"kernel {name} cannot be called from a kernel",
                             "a kernel is launched, not called; put the code both kernels "
                             "share in a module-level @helper and call that")
        if name == "tag_assert":
            return self._tag_assert(node)
        if name == "assume" and _names_tags(node):
            return self._tag_assume(node)
        if name not in RULES:
            if isinstance(node.func, ast.Attribute):
                self.expr_Attribute(node.func)
            hint = "kernels can only call Argus surface functions (argus.lang)"
            if isinstance(node.func, ast.Name) and name in self.functions.plain:
                hint = (f"{name} is a plain Python function, which kernels cannot run: mark it "
                        f"@helper to inline it where it is called")
            close = difflib.get_close_matches(name or "", list(RULES) + list(self.helpers), n=1)
            if close:
                hint = f"did you mean {close[0]}(...)? " + hint
            raise self.error(node, f"unknown function {ast.unparse(node.func)!r}", hint)
        return RULES[name](self, Args(self, node, name, self.bind_call(node, name)))

    # ---- helpers ------------------------------------------------------------------------
    def inline(self, node: ast.Call, h: Helper):
        """The helper's body, emitted here with its parameters bound to the call's arguments,
        in a scope of its own (its parameters and its module's constants); the value of its
        final `return`, if any."""
        chain = [f.helper.name for f in self.frames]
        if h.name in chain:
            cycle = " -> ".join(chain[chain.index(h.name):] + [h.name])
            what = f"helper {h.name} calls itself" if cycle == f"{h.name} -> {h.name}" \
                else f"helpers call each other ({cycle})"
            raise self.error(node, f"recursion: {what}", "helpers are inlined at parse time, "
                             "so none may reach itself again; write the repetition as a loop")
        bound = bind_arguments(self, node, h)
        caller = f"helper {self.frames[-1].helper.name}" if self.frames else \
            f"kernel {self.fn.name}"
        loc = self.loc(node)
        line = self.lines[loc.line - 1] if 0 < loc.line <= len(self.lines) else ""
        saved = self.scopes, self.constants, self.filename, self.lines
        self.frames.append(Frame(h, loc, caller, line))
        self.scopes, self.constants = [{}], dict(h.constants)
        self.filename, self.lines = h.filename, h.lines
        try:
            self.scopes[0].update(fill_defaults(self, h, bound))
            self.statements(h.body)
            if h.returns is None or h.returns.value is None:
                return None
            return self.expr(h.returns.value)
        finally:
            self.frames.pop()
            self.scopes, self.constants, self.filename, self.lines = saved

    def _returned(self, node: ast.AST, value):
        """`value`, checked when `node` is a helper call whose result is bound."""
        if value is None and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in self.helpers and not any(node.func.id in s
                                                             for s in self.scopes):
            raise self.error(node, f"helper {node.func.id} returns no value",
                             "end the helper with `return value` (or call it as a statement)")
        return value

    def _tag_assume(self, node: ast.Call):
        """assume(tag(x).f == expr): a fact about the tags of x's elements (e.g. the expert
        a router sorted each row by), taken as given by the verifier."""
        if len(node.args) != 1 or node.keywords:
            raise self.error(node, "assume takes one condition",
                             "assume(tag(segment(X, start, rows)).expert == e)")
        tr = PredicateTranslator(self)
        pred = tr.predicate(node.args[0])
        return self.emit("tag.assume", tuple(tr.operands), node,
                         attrs={"pred": pred, "text": ast.unparse(node.args[0])})

    def _tag_assert(self, node: ast.Call):
        if len(node.args) != 1 or node.keywords:
            raise self.error(node, "tag_assert takes one predicate",
                             "tag_assert(tag(out).row == coord(dst)[0])")
        tr = PredicateTranslator(self)
        pred = tr.predicate(node.args[0])
        return self.emit("tag.assert", tuple(tr.operands), node,
                         attrs={"pred": pred, "text": ast.unparse(node.args[0])})


def _names_tags(call: ast.Call) -> bool:
    """Does the call's argument use tag(...) or coord(...) (a tag predicate)?"""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
               and n.func.id in ("tag", "coord") for a in call.args for n in ast.walk(a))
