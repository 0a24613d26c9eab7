"""A KernelBench candidate's `ModelNew`, read from its syntax tree and evaluated, never executed.

The candidate file comes from a model, so its Python is not imported. Its `ModelNew` class
is glue around DSL kernels; the glue is checked on the syntax tree and then evaluated here,
node by node, over NumPy arrays (float32 for every float tensor, int32 for integer ones:
the DSL kernel declares the storage dtype and the interpreter rounds to it). What the glue
may do is the whole language:

- `__init__(self, ...)`: `super().__init__()`, `self.NAME = <expression of the arguments>`
  and `self.NAME = nn.<Module>(...)` (a declaration: the parameters are the reference
  Model's, shared by name: `self.linear.weight` is the Model's state_dict["linear.weight"]);
- `forward(self, ...)`: assignments, `return`, and expressions made of names, numbers,
  attributes, subscripts and slices (views), tuples, integer arithmetic, and calls of
  * allocation: torch.empty, torch.zeros, torch.empty_like, torch.zeros_like (`empty` is
    filled with NaN, so an output a kernel does not write shows up);
  * views: view, reshape, contiguous, flatten, unsqueeze, squeeze, t, transpose, permute,
    size, dim, numel, and the attributes shape, dtype, device, T;
  * a DSL kernel of the file: `kern(A, B, C, BN=128)` or `kern[grid](...)`;
  * int, len, min, max on sizes.

Anything else (torch.matmul, F.softmax, `x + y` on tensors, x.sum(), a method not listed) is
a torch compute op standing in for a kernel: it is rejected as a fallback, with the line.

The same evaluation runs over two tensor spaces: NumPy arrays (NumpySpace: the interpreter
child) or torch tensors on a device (TorchSpace: the GPU child, gpu_child.py), where the
allocations and views are torch's own and the kernels are launched by the runtime.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ALLOC = {"empty", "zeros", "empty_like", "zeros_like"}
VIEW_METHODS = {"view", "reshape", "contiguous", "flatten", "unsqueeze", "squeeze", "t",
                "transpose", "permute", "size", "dim", "numel"}
TENSOR_ATTRS = {"shape", "dtype", "device", "T"}
BUILTINS = {"int": int, "len": len, "min": min, "max": max}
INT_DTYPES = {"int32", "int64", "int16", "int8", "uint8", "long", "int", "bool"}
ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
         ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
         ast.Mod: lambda a, b: a % b}


class GlueError(ValueError):
    """The ModelNew glue breaks the rules; the message names the candidate's line."""


@dataclass
class Dtype:
    name: str

    @property
    def numpy(self):
        return np.int32 if self.name in INT_DTYPES else np.float32


@dataclass
class ModelGlue:
    path: Path
    init: ast.FunctionDef | None
    forward: ast.FunctionDef
    kernels: set[str]
    declared: set[str] = field(default_factory=set)


def _fail(path, node, what: str) -> GlueError:
    return GlueError(f"{Path(path).name}:{getattr(node, 'lineno', '?')}: {what}")


def _fallback(path, node, source: str) -> GlueError:
    text = ast.get_source_segment(source, node) or ast.dump(node)[:60]
    return _fail(path, node, f"`{text[:80]}` is a torch compute op (a fallback): ModelNew's "
                             f"compute must be DSL kernels of this file; torch glue may only "
                             f"allocate (torch.empty/zeros[_like]) and make views")


def read_glue(path: Path, source: str) -> ModelGlue:
    """The ModelNew class of a candidate, checked on its syntax tree (GlueError otherwise)."""
    from argus.agent.kernel_source import kernel_functions

    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise GlueError(f"{Path(path).name}:{err.lineno}: syntax error: {err.msg}") from None
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    if "ModelNew" not in classes:
        raise GlueError(f"{Path(path).name}:1: defines no class ModelNew; write "
                        f"`class ModelNew(nn.Module)` with __init__ and forward")
    methods = {n.name: n for n in classes["ModelNew"].body if isinstance(n, ast.FunctionDef)}
    if "forward" not in methods:
        raise _fail(path, classes["ModelNew"], "ModelNew has no forward(self, ...)")
    kernels = set(kernel_functions(tree))
    if not kernels:
        raise GlueError(f"{Path(path).name}:1: has no @kernel function; ModelNew must call "
                        f"DSL kernels defined in the same file")
    glue = ModelGlue(Path(path), methods.get("__init__"), methods["forward"], kernels)
    if glue.init is not None:
        for stmt in glue.init.body:
            _check_init(glue, stmt, source)
    for stmt in glue.forward.body:
        _check_forward(glue, stmt, source)
    return glue


def _is_super_init(stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "__init__")


def _self_target(stmt) -> str | None:
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Attribute)
            and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "self"):
        return stmt.targets[0].attr
    return None


def _dotted(node) -> str:
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    return node.id if isinstance(node, ast.Name) else "?"


def _check_init(glue: ModelGlue, stmt, source: str) -> None:
    if _is_super_init(stmt) or isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
        return
    name = _self_target(stmt)
    if name is None:
        raise _fail(glue.path, stmt, "ModelNew.__init__ may only call super().__init__() and "
                                     "set `self.NAME = ...`")
    value = stmt.value
    if isinstance(value, ast.Call) and _dotted(value.func).split(".")[0] in ("nn", "torch"):
        if _dotted(value.func).startswith(("nn.", "torch.nn.")):
            glue.declared.add(name)       # parameters shared with the reference Model
            return
        raise _fallback(glue.path, value, source)
    _check_expr(glue, value, source)


def _check_forward(glue: ModelGlue, stmt, source: str) -> None:
    if isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if not isinstance(target, (ast.Name, ast.Tuple)):
                    raise _fail(glue.path, stmt, "assign to plain names only in ModelNew.forward "
                                                 "(kernels write their outputs in place)")
        if stmt.value is not None:
            _check_expr(glue, stmt.value, source)
        return
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return
    raise _fail(glue.path, stmt, f"`{type(stmt).__name__}` statements are not glue; forward "
                                 f"holds assignments, kernel calls and return")


def _check_expr(glue: ModelGlue, node, source: str) -> None:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            target = func.value if isinstance(func, ast.Subscript) else func   # kern[grid](...)
            if isinstance(target, ast.Name) and (target.id in glue.kernels
                                                 or target.id in BUILTINS):
                continue
            dotted = _dotted(func) if isinstance(func, ast.Attribute) else ""
            if dotted.startswith("torch.") and dotted.count(".") == 1 and func.attr in ALLOC:
                continue
            if isinstance(func, ast.Attribute) and func.attr in VIEW_METHODS and \
                    not dotted.startswith(("torch.", "F.", "nn.")):
                continue
            raise _fallback(glue.path, sub, source)
        if isinstance(sub, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp,
                            ast.SetComp, ast.NamedExpr, ast.Await, ast.Yield)):
            raise _fail(glue.path, sub, f"`{type(sub).__name__}` is not glue")


class GlueRunner:
    """Evaluates a checked ModelNew over arrays; `launch(name, arrays, consts, grid)` runs
    a kernel (the candidate child: the interpreter, timed)."""

    def __init__(self, glue: ModelGlue, source: str, state: dict[str, np.ndarray],
                 launch, init_args=(), space=None):
        self.glue, self.source, self.state, self.launch = glue, source, state, launch
        self.space = space or NumpySpace()
        self.attrs: dict[str, object] = {}
        if glue.init is not None:
            env = self._bind(glue.init, list(init_args))
            for stmt in glue.init.body:
                name = _self_target(stmt)
                if name is not None and name not in glue.declared:
                    self.attrs[name] = self._eval(stmt.value, env)

    def _bind(self, fn: ast.FunctionDef, values: list) -> dict:
        params = [a.arg for a in fn.args.args][1:]
        defaults = fn.args.defaults
        env = {}
        for i, name in enumerate(params):
            if i < len(values):
                env[name] = values[i]
            else:
                j = i - (len(params) - len(defaults))
                if j < 0:
                    raise _fail(self.glue.path, fn, f"{fn.name} needs argument {name!r}")
                env[name] = self._eval(defaults[j], {})
        if len(values) > len(params):
            raise _fail(self.glue.path, fn, f"{fn.name} takes {len(params)} arguments, "
                                            f"the reference gives {len(values)}")
        return env

    def forward(self, inputs: list):
        env = self._bind(self.glue.forward, list(inputs))
        for stmt in self.glue.forward.body:
            if isinstance(stmt, ast.Return):
                return self._eval(stmt.value, env) if stmt.value is not None else None
            if isinstance(stmt, ast.Assign):
                value = self._eval(stmt.value, env)
                for target in stmt.targets:
                    self._assign(target, value, env)
            elif isinstance(stmt, ast.Expr):
                self._eval(stmt.value, env)
        raise _fail(self.glue.path, self.glue.forward, "forward returns nothing; return the "
                                                       "output tensor")

    def _assign(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = value
            return
        values = list(value)
        if len(values) != len(target.elts):
            raise _fail(self.glue.path, target, "cannot unpack: the counts differ")
        for t, v in zip(target.elts, values):
            self._assign(t, v, env)

    def _self_attr(self, node: ast.Attribute):
        dotted = _dotted(node)[len("self."):]
        if dotted in self.attrs:
            return self.attrs[dotted]
        if dotted in self.state:
            return self.state[dotted]
        if dotted.split(".")[0] in self.glue.declared or dotted in self.glue.declared:
            return _Declared(dotted)
        raise _fail(self.glue.path, node, f"self.{dotted} is neither set in __init__ nor a "
                                          f"parameter of the reference Model (its parameters: "
                                          f"{', '.join(sorted(self.state)) or 'none'})")

    def _eval(self, node, env):
        ev = lambda n: self._eval(n, env)           # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in BUILTINS or node.id in self.glue.kernels:
                return node.id
            raise _fail(self.glue.path, node, f"name {node.id!r} is not defined in forward")
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(ev(e) for e in node.elts)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self" or \
                    _dotted(node).startswith("self."):
                value = self._self_attr(node)
                if isinstance(value, _Declared):
                    raise _fail(self.glue.path, node, f"self.{value.name} is a module of the "
                                                      f"reference; use its parameters "
                                                      f"(self.{value.name}.weight, ...)")
                return value
            if _dotted(node).startswith("torch."):
                return Dtype(node.attr)              # torch.float32, torch.bfloat16, ...
            base = ev(node.value)
            if self.space.is_tensor(base) and node.attr in TENSOR_ATTRS:
                return self.space.attr(base, node.attr)
            raise _fail(self.glue.path, node, f"attribute .{node.attr} is not glue")
        if isinstance(node, ast.Subscript):
            base = ev(node.value)
            index = self._index(node.slice, env)
            if isinstance(base, (tuple, list)) or self.space.is_tensor(base):
                return base[index]
            raise _fail(self.glue.path, node, "subscript of something that is not a tensor "
                                              "or a shape")
        if isinstance(node, ast.BinOp):
            left, right = ev(node.left), ev(node.right)
            if self.space.is_tensor(left) or self.space.is_tensor(right):
                raise _fallback(self.glue.path, node, self.source)
            op = ARITH.get(type(node.op))
            if op is None or not all(isinstance(v, int) for v in (left, right)):
                raise _fail(self.glue.path, node, "only +, -, *, //, % on integer sizes")
            return op(left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = ev(node.operand)
            if self.space.is_tensor(value):
                raise _fallback(self.glue.path, node, self.source)
            return -value
        if isinstance(node, ast.Call):
            return self._call(node, env)
        raise _fail(self.glue.path, node, f"`{type(node).__name__}` is not glue")

    def _index(self, node, env):
        if isinstance(node, ast.Slice):
            return slice(*(self._eval(p, env) if p is not None else None
                           for p in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return tuple(self._index(e, env) for e in node.elts)
        return self._eval(node, env)

    def _call(self, node: ast.Call, env):
        ev = lambda n: self._eval(n, env)           # noqa: E731
        func = node.func
        keywords = {k.arg: ev(k.value) for k in node.keywords if k.arg}
        args = [ev(a) for a in node.args]
        grid = None
        if isinstance(func, ast.Subscript):
            grid = ev(func.slice)
            func = func.value
        if isinstance(func, ast.Name) and func.id in self.glue.kernels:
            for a in args:
                if self.space.is_tensor(a) and not self.space.is_contiguous(a):
                    raise _fail(self.glue.path, node, f"kernel {func.id} gets a non-contiguous "
                                                      f"tensor; call .contiguous() on it first")
            self.launch(func.id, args, keywords, grid, node.lineno)
            return None
        if isinstance(func, ast.Name) and func.id in BUILTINS:
            return BUILTINS[func.id](*args)
        name = func.attr
        if _dotted(func).startswith("torch."):
            return self.space.allocate(name, args, keywords)
        base = ev(func.value)
        if not self.space.is_tensor(base):
            raise _fail(self.glue.path, node, f".{name}() of something that is not a tensor")
        return self.space.view(base, name, args)


@dataclass
class _Declared:
    name: str


class NumpySpace:
    """Tensors as NumPy arrays: float32 for every float tensor, int32 for integer ones (the
    interpreter rounds to the dtype a kernel declares)."""

    @staticmethod
    def is_tensor(x) -> bool:
        return isinstance(x, np.ndarray)

    @staticmethod
    def is_contiguous(x) -> bool:
        return x.flags.c_contiguous

    @staticmethod
    def attr(base, name: str):
        if name == "shape":
            return tuple(int(d) for d in base.shape)
        if name == "dtype":
            return Dtype("int32" if base.dtype.kind in "iu" else "float32")
        if name == "device":
            return "device"
        return base.T

    @staticmethod
    def allocate(name: str, args, keywords):
        return _allocate(name, args, keywords)

    @staticmethod
    def view(base, name: str, args):
        return _view(base, name, args)


class TorchSpace:
    """Tensors as torch tensors on `device`: float tensors keep the dtype the glue asks for
    (float32, bfloat16 or float16; float32 where it names none), integer ones are int32.
    `poison`: torch.empty fills with NaN (the least int32), so an output a kernel does not
    write shows up; off for the timed forwards (an allocation is not a kernel there)."""

    FLOATS = {"float32": "float32", "float": "float32", "bfloat16": "bfloat16",
              "float16": "float16", "half": "float16"}

    def __init__(self, torch, device: str, poison: bool = True):
        self.torch, self.device, self.poison = torch, device, poison

    def is_tensor(self, x) -> bool:
        return isinstance(x, self.torch.Tensor)

    @staticmethod
    def is_contiguous(x) -> bool:
        return x.is_contiguous()

    def dtype(self, d):
        if isinstance(d, Dtype):
            name = "int32" if d.name in INT_DTYPES else self.FLOATS.get(d.name, "float32")
            return getattr(self.torch, name)
        return d

    def from_host(self, array: np.ndarray):
        t = self.torch.from_numpy(np.ascontiguousarray(array))
        t = t.to(self.torch.int32) if array.dtype.kind in "iub" else t.to(self.torch.float32)
        return t.to(self.device)

    def to_host(self, t) -> np.ndarray:
        t = t.detach().to("cpu")
        return (t.to(self.torch.int32) if not t.is_floating_point()
                else t.to(self.torch.float32)).numpy()

    def attr(self, base, name: str):
        if name == "shape":
            return tuple(int(d) for d in base.shape)
        if name == "dtype":
            return Dtype(str(base.dtype).replace("torch.", ""))
        if name == "device":
            return "device"
        return base.T

    def allocate(self, name: str, args, keywords):
        torch = self.torch
        if name.endswith("_like"):
            like = args[0]
            dtype = self.dtype(keywords["dtype"]) if "dtype" in keywords else like.dtype
            shape = tuple(like.shape)
        else:
            dtype = self.dtype(keywords.get("dtype", Dtype("float32")))
            shape = _shape(args)
        if name.startswith("zeros"):
            return torch.zeros(shape, dtype=dtype, device=self.device)
        if not self.poison:
            return torch.empty(shape, dtype=dtype, device=self.device)
        fill = float("nan") if dtype.is_floating_point else int(np.iinfo(np.int32).min)
        return torch.full(shape, fill, dtype=dtype, device=self.device)

    def view(self, base, name: str, args):
        if name in ("view", "reshape"):
            return getattr(base, name)(_shape(args))
        if name == "permute":
            return base.permute(_shape(args))
        if name == "size":
            return tuple(int(d) for d in base.shape) if not args else int(base.shape[args[0]])
        if name == "numel":
            return int(base.numel())
        return getattr(base, name)(*args)       # contiguous, flatten, (un)squeeze, t, ...


def _shape(args) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(int(a) for a in args[0])
    return tuple(int(a) for a in args)


def _allocate(name: str, args, keywords) -> np.ndarray:
    if name.endswith("_like"):
        like = args[0]
        dtype = keywords.get("dtype")
        np_dtype = dtype.numpy if isinstance(dtype, Dtype) else like.dtype
        shape = like.shape
    else:
        dtype = keywords.get("dtype", Dtype("float32"))
        np_dtype = dtype.numpy if isinstance(dtype, Dtype) else np.float32
        shape = _shape(args)
    if name.startswith("zeros"):
        return np.zeros(shape, np_dtype)
    fill = np.iinfo(np.int32).min if np_dtype == np.int32 else np.nan
    return np.full(shape, fill, np_dtype)


def _view(base: np.ndarray, name: str, args) -> object:
    if name in ("view", "reshape"):
        shape = _shape(args)
        if name == "view" and not base.flags.c_contiguous:
            raise ValueError("view of a non-contiguous tensor; use reshape or contiguous()")
        return base.reshape(shape)
    if name == "contiguous":
        return np.ascontiguousarray(base)
    if name == "flatten":
        return base.reshape(-1) if not args else base.reshape(
            base.shape[:args[0]] + (math.prod(base.shape[args[0]:]),))
    if name == "unsqueeze":
        return np.expand_dims(base, args[0])
    if name == "squeeze":
        return np.squeeze(base, *args)
    if name == "t":
        return base.T
    if name == "transpose":
        return np.swapaxes(base, args[0], args[1])
    if name == "permute":
        return np.transpose(base, _shape(args))
    if name == "size":
        return tuple(base.shape) if not args else int(base.shape[args[0]])
    if name == "dim":
        return base.ndim
    return int(base.size)                           # numel
