"""The kernel header: decorator launch arguments and parameter annotations."""

from __future__ import annotations

import ast
from typing import Any

from argus.ir.nodes import BLOCK_ORDERS, Value
from argus.limits import (MAX_BLOCKS_PER_SM, MAX_CLUSTER_SIZE, MAX_GRID_DIMS,
                          MAX_THREADS_PER_BLOCK, MAX_THREADS_PER_SM)
from argus.ir.types import DTYPES, INDEX, GlobalTensorType, ScalarType

DTYPE_NAMES = tuple(n for n in DTYPES if n not in ("index", "pred"))


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` as text, or None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def surface_name(node: ast.AST) -> str | None:
    """`wgmma`, `argus.wgmma`, `argus.lang.wgmma` -> "wgmma"."""
    name = dotted(node)
    if name is None:
        return None
    for prefix in ("argus.lang.", "argus.", "lang."):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def kernel_decorator(fn: ast.FunctionDef) -> ast.expr | None:
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if surface_name(target) == "kernel":
            return dec
    return None


class Header:
    """Reads parameters and launch arguments; `fx` is the visitor (errors, constants)."""

    def __init__(self, fx):
        self.fx = fx

    def dtype(self, node: ast.AST):
        name = surface_name(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        elif isinstance(self.fx.constants.get(name), str):   # a module constant: DT = "bf16"
            name = self.fx.constants[name]
        if name not in DTYPE_NAMES:
            raise self.fx.error(node, f"unknown dtype {ast.unparse(node)!r}",
                                f"one of {', '.join(DTYPE_NAMES)}")
        return DTYPES[name]

    def params(self, fn: ast.FunctionDef) -> tuple[list[Value], dict[str, Value], dict[str, Any]]:
        """(parameters, shape symbols, constants); `self.arguments` is then the launch
        arguments in order: the tensor and scalar parameters and the size parameters
        (`SQ: Dim`, shape symbols given as ints), by name."""
        args = fn.args
        if args.vararg or args.kwarg or args.posonlyargs:
            raise self.fx.error(fn, "kernels take named parameters only (no *args/**kwargs)")
        positional = args.args + args.kwonlyargs
        defaults = dict(zip([a.arg for a in args.args[len(args.args) - len(args.defaults):]],
                            args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d})
        params: list[Value] = []
        symbols: dict[str, Value] = {}
        constants: dict[str, Any] = {}
        self.arguments: list[str] = []
        for a in positional:
            ann = a.annotation
            if ann is None:
                raise self.fx.error(a, f"parameter {a.arg} has no annotation",
                                    'annotate: Tensor["M", "K", bf16], Dim, Scalar[int32] or const')
            if surface_name(ann) == "const":
                if a.arg not in defaults:
                    raise self.fx.error(a, f"constant {a.arg} needs a value", f"{a.arg}: const = 64")
                overrides = getattr(self.fx, "overrides", {})
                constants[a.arg] = overrides[a.arg] if a.arg in overrides else \
                    self.fx.static(defaults[a.arg], what=f"constant {a.arg}")
                self.fx.constants[a.arg] = constants[a.arg]
                continue
            if surface_name(ann) == "Dim":
                if a.arg in defaults:
                    raise self.fx.error(a, f"size {a.arg} is given at launch and takes no "
                                        "default", f"{a.arg}: Dim (or {a.arg}: const = ... for "
                                        "a compile-time size)")
                symbols.setdefault(a.arg, Value(a.arg, INDEX))   # a tensor dim may name it
                self.arguments.append(a.arg)
                continue
            if not isinstance(ann, ast.Subscript) or surface_name(ann.value) not in ("Tensor",
                                                                                     "Scalar"):
                raise self.fx.error(ann, f"unsupported annotation {ast.unparse(ann)!r} for "
                                    f"{a.arg}", 'use Tensor["M", "K", bf16], Dim, '
                                    "Scalar[int32] or const")
            items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            if surface_name(ann.value) == "Scalar":
                params.append(Value(a.arg, ScalarType(self.dtype(items[0]))))
                self.arguments.append(a.arg)
                continue
            if len(items) < 2:
                raise self.fx.error(ann, f"Tensor for {a.arg} needs dims and a dtype",
                                    'Tensor["M", "K", bf16]')
            dims = []
            for d in items[:-1]:
                if isinstance(d, ast.Constant) and isinstance(d.value, str):
                    if not d.value.isidentifier():
                        raise self.fx.error(d, f"symbolic dim {d.value!r} is not a name")
                    symbols.setdefault(d.value, Value(d.value, INDEX))
                    dims.append(d.value)
                else:
                    size = self.fx.static(d, what="a tensor dimension")
                    if not isinstance(size, int) or size <= 0:
                        raise self.fx.error(d, f"dimension {size!r} is not a positive int")
                    dims.append(size)
            params.append(Value(a.arg, GlobalTensorType(tuple(dims), self.dtype(items[-1]))))
            self.arguments.append(a.arg)
        return params, symbols, constants

    def launch(self, dec: ast.expr | None, symbols: dict[str, Value]) -> dict[str, Any]:
        launch = {"grid": ("1",), "block": 128, "cluster": (1, 1, 1), "blocks_per_sm": 1,
                  "block_order": "forward"}
        if not isinstance(dec, ast.Call):
            return launch
        if dec.args:
            raise self.fx.error(dec, "kernel(...) takes keyword arguments",
                                "@kernel(grid=(132,), block=384, cluster=(1, 1, 1))")
        for kw in dec.keywords:
            if kw.arg == "grid":
                items = kw.value.elts if isinstance(kw.value, ast.Tuple) else [kw.value]
                launch["grid"] = tuple(self.grid_dim(i, symbols) for i in items)
                self.check_grid(items, launch["grid"])
            elif kw.arg == "block":
                block = self.fx.static(kw.value, what="block")
                if not isinstance(block, int) or block <= 0 or block % 128:
                    raise self.fx.error(kw.value, f"block={block!r} is not a positive multiple of "
                                        "128 threads", "a block is whole warpgroups: 128, 256, 384")
                if block > MAX_THREADS_PER_BLOCK:
                    raise self.fx.error(kw.value, f"block={block} is over the "
                                        f"{MAX_THREADS_PER_BLOCK} threads a Hopper block can have",
                                        "use at most 8 warpgroups (3 is the usual most)")
                launch["block"] = block
            elif kw.arg == "cluster":
                cluster = self.fx.static(kw.value, what="cluster")
                cluster = cluster if isinstance(cluster, tuple) else (cluster,)
                cluster = tuple(cluster) + (1,) * (3 - len(cluster))
                if len(cluster) != 3 or not all(isinstance(c, int) and c > 0 for c in cluster):
                    raise self.fx.error(kw.value, f"cluster={cluster!r} is not up to 3 positive ints")
                if cluster[0] * cluster[1] * cluster[2] > MAX_CLUSTER_SIZE:
                    raise self.fx.error(kw.value, f"cluster={cluster!r} has "
                                        f"{cluster[0] * cluster[1] * cluster[2]} blocks, over the "
                                        f"{MAX_CLUSTER_SIZE} of a portable Hopper cluster",
                                        f"use at most {MAX_CLUSTER_SIZE} blocks per cluster, "
                                        f"e.g. cluster=(2, 1, 1)")
                launch["cluster"] = cluster
            elif kw.arg == "blocks_per_sm":
                launch["blocks_per_sm"] = self.blocks_per_sm(kw.value)
            elif kw.arg == "block_order":
                launch["block_order"] = self.block_order(kw.value)
            else:
                raise self.fx.error(kw, f"unknown kernel argument {kw.arg!r}",
                                    "kernel(grid=..., block=..., cluster=..., blocks_per_sm=..., "
                                    "block_order=...)")
        if launch["block_order"] != "forward" and launch["cluster"] != (1, 1, 1):
            node = next(kw.value for kw in dec.keywords if kw.arg == "block_order")
            raise self.fx.error(node, f"block_order={launch['block_order']!r} with "
                                f"cluster={launch['cluster']}: a cluster's blocks are numbered by "
                                "the hardware (cluster_rank()), so their ids cannot be reversed",
                                "launch clusters in the forward order, or drop the cluster")
        resident = launch["block"] * launch["blocks_per_sm"]
        if resident > MAX_THREADS_PER_SM:
            node = next(kw.value for kw in dec.keywords if kw.arg == "blocks_per_sm")
            raise self.fx.error(node, f"{launch['blocks_per_sm']} blocks of {launch['block']} "
                                f"threads are {resident} threads, over the {MAX_THREADS_PER_SM} "
                                "an SM holds", "fewer blocks per SM, or fewer warpgroups a block")
        return launch

    def blocks_per_sm(self, node: ast.expr) -> int:
        """How many blocks an SM is meant to hold at once (an int in 1..MAX_BLOCKS_PER_SM):
        the code generator budgets each block 1/n of the register file, the resource pass
        checks n blocks' shared memory against the SM's."""
        n = self.fx.static(node, what="blocks_per_sm")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_BLOCKS_PER_SM:
            raise self.fx.error(node, f"blocks_per_sm={n!r} is not an int in 1..{MAX_BLOCKS_PER_SM}",
                                "blocks_per_sm=2: two blocks share each SM (1, the default: "
                                "one block has the whole SM)")
        return n

    def block_order(self, node: ast.expr) -> str:
        """The order the hardware launches the blocks in: "forward" (block ids from 0, x
        fastest, the default) or "reversed" (the block launched first has the last id on
        every axis). The set of blocks is the same, so the kernel computes the same thing;
        what starts first changes (causal attention: the longest query blocks)."""
        order = self.fx.static(node, what="block_order")
        if order not in BLOCK_ORDERS:
            raise self.fx.error(node, f"block_order={order!r} is not one of {BLOCK_ORDERS}",
                                'block_order="reversed" launches the last blocks first')
        return order

    def fold_text(self, node: ast.expr) -> str:
        """The source of `node` with compile-time constants substituted (for the launch
        summary); names that are not constants are kept as written."""
        fx = self.fx
        # inside a helper, its parameters and locals stand for the caller's values: a
        # compile-time one is substituted, a runtime one is named as the IR names it
        local = {} if not getattr(fx, "frames", None) else \
            {k: v for scope in fx.scopes for k, v in scope.items()}

        class Fold(ast.NodeTransformer):
            def visit_Name(self, n):
                if n.id in local:
                    v = local[n.id]
                    if isinstance(v, Value):
                        return ast.Name(v.name, ast.Load())
                    if isinstance(v, (int, float, str)):
                        return ast.Constant(v)
                    return n
                return ast.Constant(fx.constants[n.id]) if n.id in fx.constants else n
        return ast.unparse(Fold().visit(ast.parse(ast.unparse(node), mode="eval").body))

    def check_grid(self, items: list[ast.expr], grid: tuple[str, ...]) -> None:
        """At most three dimensions, each literal one within Hopper's gridDim bounds."""
        if len(grid) > len(MAX_GRID_DIMS):
            raise self.fx.error(items[len(MAX_GRID_DIMS)], f"grid has {len(grid)} dimensions; "
                                f"a grid has at most {len(MAX_GRID_DIMS)} (x, y, z)")
        for node, text, most, axis in zip(items, grid, MAX_GRID_DIMS, "xyz"):
            if text.isdigit() and int(text) > most:
                raise self.fx.error(node, f"grid.{axis} = {text} is over the {most} a Hopper "
                                    f"grid can have along {axis}",
                                    "a persistent kernel launches one block per SM "
                                    "(grid=(132,)); a data-parallel one cdiv(M, BM) blocks")

    def grid_dim(self, node: ast.expr, symbols: dict[str, Value]) -> str:
        """An int, or a string expression over shape symbols and constants, folded to text;
        `a if c else b` with c known at compile time is the branch c picks."""
        if isinstance(node, ast.IfExp):
            test = self.fx.static(node.test, what="a grid dimension's condition")
            return self.grid_dim(node.body if test else node.orelse, symbols)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                expr = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                raise self.fx.error(node, f"grid expression {node.value!r} is not valid Python")
            fx = self.fx

            class Fold(ast.NodeTransformer):
                def visit_Name(self, n):
                    if n.id in fx.constants:
                        return ast.Constant(fx.constants[n.id])
                    if n.id in symbols or n.id == "cdiv":
                        return n
                    raise fx.error(node, f"unknown name {n.id!r} in grid expression",
                                   "grid expressions may use shape symbols and constants")
            return ast.unparse(Fold().visit(expr))
        value = self.fx.static(node, what="a grid dimension")
        if not isinstance(value, int) or value <= 0:
            raise self.fx.error(node, f"grid dimension {value!r} is not a positive int",
                                'or a string over shape symbols, e.g. "M // BM"')
        return str(value)
