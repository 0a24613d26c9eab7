"""The rule registry and the argument accessors rules use to check their inputs."""

from __future__ import annotations

import ast
from typing import Any, Callable

from argus.ir.nodes import Value
from argus.ir.types import DTYPES, DType

RULES: dict[str, Callable] = {}


def rule(name: str):
    def register(fn):
        RULES[name] = fn
        return fn
    return register


def describe(x: Any) -> str:
    if isinstance(x, Value):
        return f"{x.type} %{x.name}"
    return f"the constant {x!r}"


class Args:
    """The bound arguments of one surface call, each with the AST node it came from."""

    def __init__(self, fx, call: ast.Call, fn_name: str, bound: dict[str, tuple[Any, ast.AST]]):
        self.fx, self.call, self.fn, self._bound = fx, call, fn_name, bound

    def __contains__(self, name: str) -> bool:
        return name in self._bound

    def get(self, name: str, default=None):
        return self._bound[name][0] if name in self._bound else default

    def node(self, name: str) -> ast.AST:
        return self._bound[name][1] if name in self._bound else self.call

    def fail(self, name: str, message: str, hint: str = ""):
        # every diagnostic says how to fix it; a rule without its own hint points at the
        # function's documentation (its signature and what each argument takes)
        raise self.fx.error(self.node(name), f"{self.fn}: {message}",
                            hint or f"see the docstring of argus.{self.fn}")

    def value(self, name: str, *types: type, what: str = "", hint: str = "") -> Value:
        x = self.get(name)
        if not isinstance(x, Value) or (types and not isinstance(x.type, types)):
            self.fail(name, f"argument {name} must be {what or ' or '.join(t.__name__ for t in types)}"
                      f", got {describe(x)}", hint)
        return x

    def static_int(self, name: str, minimum: int | None = None) -> int:
        x = self.get(name)
        if isinstance(x, bool) or not isinstance(x, int):
            self.fail(name, f"argument {name} must be a compile-time integer, got {describe(x)}",
                      "use a literal, a const parameter or a module-level constant")
        if minimum is not None and x < minimum:
            self.fail(name, f"argument {name} must be >= {minimum}, got {x}")
        return x

    def static_str(self, name: str, choices: tuple[str, ...]) -> str:
        x = self.get(name)
        if x not in choices:
            self.fail(name, f"argument {name} must be one of {', '.join(choices)}, got {x!r}")
        return x

    def static_shape(self, name: str) -> tuple[int, ...]:
        x = self.get(name)
        if isinstance(x, int) and not isinstance(x, bool):
            x = (x,)
        if not (isinstance(x, tuple) and x and all(isinstance(d, int) and d > 0 for d in x)):
            self.fail(name, f"argument {name} must be a tuple of positive compile-time ints, "
                      f"got {describe(x)}", "tile shapes are static; fold them from constants")
        return x

    def dtype(self, name: str) -> DType:
        x = self.get(name)
        if isinstance(x, DType):
            return x
        if isinstance(x, str) and x in DTYPES and x not in ("index", "pred"):
            return DTYPES[x]
        self.fail(name, f"argument {name} must be a dtype (bf16, fp16, fp32, fp8e4m3, int32), "
                  f"got {describe(x)}")

    def scalar(self, name: str):
        """A uniform scalar operand: a compile-time int or an index/int32/pred scalar value."""
        from argus.ir.types import ScalarType
        x = self.get(name)
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return x
        if isinstance(x, bool):
            return int(x)
        if isinstance(x, Value) and isinstance(x.type, ScalarType):
            return x
        self.fail(name, f"argument {name} must be a scalar, got {describe(x)}")

    def cluster_rank(self, name: str, what: str):
        """A CTA rank (or multicast mask) argument: only in a kernel with a cluster of several
        blocks, and, when static, naming CTAs of that cluster."""
        x = self.scalar(name)
        shape = getattr(self.fx, "cluster", (1, 1, 1))
        size = 1
        for c in shape:
            size *= c
        if size == 1:
            self.fail(name, f"{what} needs a cluster of several blocks, but the kernel's "
                      f"cluster is {tuple(shape)}", "declare one in the decorator, e.g. "
                      "@kernel(grid=..., block=..., cluster=(2, 1, 1)), or drop the argument")
        return x, size

    def scalars(self, name: str) -> tuple:
        x = self.get(name)
        items = x if isinstance(x, tuple) else (x,)
        from argus.ir.types import ScalarType
        for item in items:
            ok = (isinstance(item, int) and not isinstance(item, bool)) or (
                isinstance(item, Value) and isinstance(item.type, ScalarType))
            if not ok:
                self.fail(name, f"argument {name} must be a tuple of scalars, got {describe(item)}")
        return items
