"""Device helpers: module-level functions marked `@helper`, inlined at parse time into the
kernel (or helper) that calls them.

A call binds the helper's parameters to the caller's values (positionally, by keyword, or
from a default, which is a compile-time constant of the helper's module) and visits the
helper's body in a fresh scope: it sees its parameters and the module's constants, nothing
of its caller, and the names it binds stay its own. `return` as its last statement hands a
value (or a tuple) back. The ops it emits carry the helper's own file:line, so diagnostics
and the verifier's findings point into the helper; a DSLError raised inside one also names,
in a note per level, the call that inlined it."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from typing import Any, Callable

from argus.ir.nodes import Loc
from argus.ir.types import DTYPES

from .errors import DSLError, Note
from .header import kernel_decorator, surface_name

RESERVED = ("range", "kernel", "helper", "inf")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str                     # "positional" (positional-only), "either", "keyword"
    default: ast.expr | None      # None: the caller must pass it


@dataclass
class Helper:
    name: str
    node: ast.FunctionDef
    filename: str
    lines: list[str]
    constants: dict[str, Any]     # the module constants its body sees (overrides applied)
    params: list[Param]
    body: list[ast.stmt]          # without the docstring and the final return
    returns: ast.Return | None    # the final `return`, if any

    @property
    def signature(self) -> str:
        return f"{self.name}({ast.unparse(self.node.args)})"


@dataclass
class Frame:
    """One inlined call: which helper, from where (for the notes of a DSLError)."""
    helper: Helper
    loc: Loc
    caller: str
    source_line: str


@dataclass
class ModuleFunctions:
    """The module-level functions of a kernel file, by what they are."""
    helpers: dict[str, Helper] = field(default_factory=dict)
    kernels: set[str] = field(default_factory=set)
    plain: set[str] = field(default_factory=set)     # undecorated defs: not callable in kernels


def helper_decorator(fn: ast.AST) -> ast.expr | None:
    for dec in getattr(fn, "decorator_list", ()):
        target = dec.func if isinstance(dec, ast.Call) else dec
        if surface_name(target) == "helper":
            return dec
    return None


def _fail(filename: str, lines: list[str], node: ast.AST, message: str, hint: str) -> DSLError:
    loc = Loc(filename, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1)
    line = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
    return DSLError(message, loc, hint, line)


def _returns(stmts: list[ast.stmt]):
    """Every `return` in these statements, not looking into nested definitions (which are
    errors of their own)."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(node))


def read_module(tree: ast.Module, filename: str, lines: list[str],
                constants: dict[str, Any], surface: dict) -> ModuleFunctions:
    """Classify the module's functions and read (and check) every helper's definition."""
    error = lambda node, message, hint: _fail(filename, lines, node, message, hint)  # noqa: E731
    out = ModuleFunctions()
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in defs:
        if kernel_decorator(fn) is not None and helper_decorator(fn) is None:
            out.kernels.add(fn.name)
    for fn in defs:
        if helper_decorator(fn) is None:
            if kernel_decorator(fn) is None:
                out.plain.add(fn.name)
            continue
        if isinstance(fn, ast.AsyncFunctionDef):
            raise error(fn, f"helper {fn.name} is an async def", "a helper is a plain `def`")
        if fn.name in out.helpers:
            first = out.helpers[fn.name].node.lineno
            raise error(fn, f"helper {fn.name} is defined twice (first at line {first})",
                        "give each helper its own name")
        if fn.name in out.kernels:
            raise error(fn, f"helper {fn.name} has the name of a kernel of this module",
                        "give the helper its own name")
        if fn.name in surface or fn.name in RESERVED or fn.name in DTYPES:
            raise error(fn, f"helper {fn.name} has the name of an Argus surface function",
                        f"rename it: inside kernels {fn.name} means argus.lang's")
        if fn.name in constants:
            raise error(fn, f"helper {fn.name} has the name of a module constant",
                        "give the helper its own name")
        out.helpers[fn.name] = _read_helper(fn, filename, lines, constants, error)
    for h in out.helpers.values():
        for p in h.params:
            if p.name in out.helpers:
                raise error(h.node, f"parameter {p.name} of helper {h.name} has the name of "
                            "a helper", "rename the parameter")
    return out


def _read_helper(fn: ast.FunctionDef, filename: str, lines: list[str],
                 constants: dict[str, Any], error: Callable) -> Helper:
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = surface_name(target)
        if name == "helper":
            if isinstance(dec, ast.Call) and (dec.args or dec.keywords):
                raise error(dec, "helper takes no arguments", "write @helper above the def")
        elif name == "kernel":
            raise error(dec, f"{fn.name} is marked both @kernel and @helper",
                        "a kernel is launched, a helper is inlined into kernels: keep one")
        else:
            raise error(dec, f"helper {fn.name} has another decorator, {ast.unparse(target)!r}",
                        "a helper takes @helper only")
    args = fn.args
    if args.vararg or args.kwarg:
        raise error(args.vararg or args.kwarg, f"helper {fn.name} takes *args or **kwargs",
                    "helpers take named parameters only (defaults allowed)")
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    params = [Param(a.arg, "positional" if i < len(args.posonlyargs) else "either",
                    args.defaults[i - first_default] if i >= first_default else None)
              for i, a in enumerate(positional)]
    params += [Param(a.arg, "keyword", d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]   # docstring
    returns = None
    if body and isinstance(body[-1], ast.Return):
        returns = body.pop()
    for ret in _returns(body):
        raise error(ret, f"return in helper {fn.name} is not its last statement",
                    "a helper hands values back with one `return` at the end of its body: "
                    "bind what each branch computes to names and return them there")
    return Helper(fn.name, fn, filename, lines, dict(constants), params, body, returns)


def bind_arguments(fx, node: ast.Call, h: Helper) -> dict[str, Any]:
    """The helper's parameters bound to the call's arguments, evaluated in the caller's
    scope in source order (defaults are left to `fill_defaults`, in the helper's)."""
    for a in node.args:
        if isinstance(a, ast.Starred):
            raise fx.error(a, "*args is not supported", "pass arguments explicitly")
    for k in node.keywords:
        if k.arg is None:
            raise fx.error(k, "**kwargs is not supported", "pass arguments explicitly")
    usage = f"its signature: {h.signature}"
    positional = [p for p in h.params if p.kind != "keyword"]
    if len(node.args) > len(positional):
        raise fx.error(node.args[len(positional)],
                       f"helper {h.name} takes {len(positional)} positional argument"
                       f"{'' if len(positional) == 1 else 's'} but {len(node.args)} were "
                       "given", usage)
    given: list[tuple[str, ast.expr]] = [(p.name, a) for p, a in zip(positional, node.args)]
    by_name = {p.name: p for p in h.params}
    for k in node.keywords:
        p = by_name.get(k.arg)
        if p is None:
            close = difflib.get_close_matches(k.arg, list(by_name), n=1)
            hint = (f"did you mean {close[0]}=...? " if close else "") + usage
            raise fx.error(k, f"helper {h.name} has no parameter {k.arg!r}", hint)
        if p.kind == "positional":
            raise fx.error(k, f"parameter {k.arg} of helper {h.name} is positional-only",
                           f"pass it by position; {usage}")
        if any(name == k.arg for name, _ in given):
            raise fx.error(k, f"helper {h.name} got two values for parameter {k.arg!r}", usage)
        given.append((k.arg, k.value))
    named = {name for name, _ in given}
    missing = [p.name for p in h.params if p.name not in named and p.default is None]
    if missing:
        s = "" if len(missing) == 1 else "s"
        raise fx.error(node, f"helper {h.name} is missing argument{s} "
                       f"{', '.join(repr(m) for m in missing)}", usage)
    return {name: fx.expr(value) for name, value in given}


def fill_defaults(fx, h: Helper, bound: dict[str, Any]) -> dict[str, Any]:
    """`bound` with every parameter the call left out set to its default: a compile-time
    constant, evaluated in the helper's module scope."""
    out = dict(bound)
    for p in h.params:
        if p.name not in out:
            out[p.name] = fx.static(p.default, what=f"the default of parameter {p.name}")
    return out


def call_notes(frames: list[Frame]) -> tuple[Note, ...]:
    """A note per inlined call, innermost first."""
    return tuple(Note(f.loc, f"in helper {f.helper.name}, inlined into {f.caller} here",
                      f.source_line) for f in reversed(frames))
