"""Nested integer tuples (CuTe's IntTuple): the shapes, strides and coordinates of layouts.

A leaf is an int or a z3 bit-vector term; a tuple nests leaves and tuples. Coordinates
are colexicographic: the first mode varies fastest. Everything here goes through
`symbolic`, so a symbolic coordinate gives an index term.
"""

from __future__ import annotations

from functools import reduce

from . import symbolic as sym


class IntTupleError(ValueError):
    """Tuples that do not fit together (not congruent, bad leaves, indivisible shapes)."""


def is_tuple(x) -> bool:
    return isinstance(x, tuple)


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def flatten(t) -> tuple:
    """The leaves of t, left to right, as a flat tuple (a leaf gives a 1-tuple)."""
    if not is_tuple(t):
        return (t,)
    return tuple(leaf for item in t for leaf in flatten(item))


def product(t):
    """The product of all leaves (1 for the empty tuple)."""
    return reduce(sym.mul, flatten(t), 1)


def rank(t) -> int:
    """Number of top-level modes: len for a tuple, 1 for a leaf."""
    return len(t) if is_tuple(t) else 1


def depth(t) -> int:
    """Nesting depth: 0 for a leaf, 1 for a flat tuple, and so on."""
    if not is_tuple(t):
        return 0
    return 1 + max((depth(x) for x in t), default=0)


def congruent(a, b) -> bool:
    """Same nesting structure (profile), leaves aside."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def prefix_product(shape, init=1):
    """Exclusive prefix products congruent with shape: the compact column-major strides."""
    if is_tuple(shape):
        out = []
        for mode in shape:
            out.append(prefix_product(mode, init))
            init = sym.mul(init, product(mode))
        return tuple(out)
    return init


def shape_div(a, b):
    """Divide b out of a from the left (CuTe's shape_div); a/b or b/a must be exact."""
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise IntTupleError(f"shape_div: {a} and {b} have different ranks")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for mode in a:
            out.append(shape_div(mode, b))
            b = shape_div(b, product(mode))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if a % b != 0 and b % a != 0:
        raise IntTupleError(f"shape_div: neither of {a} and {b} divides the other")
    return max(1, a // b)


def _check_leaves(t, what: str):
    for leaf in flatten(t):
        if not sym.is_sym_int(leaf):
            raise IntTupleError(f"{what} {t!r} has a leaf {leaf!r} that is neither an int "
                                "nor a z3 bit-vector")


def _bound(crd_max, shape, stride_max):
    """An upper bound on crd2idx for coordinates up to crd_max and strides up to stride_max."""
    if is_tuple(crd_max):
        if not is_tuple(shape) or len(crd_max) != len(shape):
            raise IntTupleError(f"coordinate of profile {crd_max!r} does not match shape {shape!r}")
        return sum(_bound(c, s, d) for c, s, d in zip(crd_max, shape, stride_max))
    if is_tuple(shape):
        total = 0
        for s, d in zip(shape[:-1], stride_max[:-1]):
            extent = sym.max_value(product(s))
            total += _bound(min(crd_max, extent - 1), s, d)
            crd_max //= max(extent, 1)
        return total + _bound(crd_max, shape[-1], stride_max[-1])
    return crd_max * stride_max


def _map_leaves(f, t):
    return tuple(_map_leaves(f, x) for x in t) if is_tuple(t) else f(t)


def crd2idx(crd, shape, stride=None):
    """The index of a coordinate: sum of coordinate x stride over the leaves.

    `crd` may be congruent with `shape` or coarser: an int against a tuple mode is split
    colexicographically, the last sub-mode taking what remains (so L(i) extends linearly
    past size(L), as in CuTe). With symbolic leaves every term is widened up front to hold
    the largest value the sum can take, so nothing wraps.
    """
    if stride is None:
        stride = prefix_product(shape)
    if not congruent(shape, stride):
        raise IntTupleError(f"stride {stride!r} is not congruent with shape {shape!r}")
    _check_leaves(crd, "coordinate")
    if any(sym.is_symbolic(x) for x in flatten(crd) + flatten(stride)):
        for leaf in flatten(stride):
            if is_int(leaf) and leaf < 0:
                raise sym.SymbolicError(
                    f"stride {stride!r} has a negative leaf {leaf}; symbolic evaluation is "
                    "unsigned, so use non-negative strides")
        bound = _bound(_map_leaves(sym.max_value, crd), shape, _map_leaves(sym.max_value, stride))
        width = sym.width_for(bound + 1)
        crd = _map_leaves(lambda x: sym.widen(x, width), crd)
        stride = _map_leaves(lambda x: sym.widen(x, width), stride)
    return _crd2idx(crd, shape, stride)


def _crd2idx(crd, shape, stride):
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise IntTupleError(f"coordinate {crd!r} does not match shape {shape!r}")
        return reduce(sym.add, (_crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride)), 0)
    if is_tuple(shape):
        total = 0
        for s, d in zip(shape[:-1], stride[:-1]):
            extent = product(s)
            total = sym.add(total, _crd2idx(sym.umod(crd, extent), s, d))
            crd = sym.udiv(crd, extent)
        return sym.add(total, _crd2idx(crd, shape[-1], stride[-1]))
    return sym.mul(crd, stride)


def idx2crd(idx, shape, stride=None):
    """The coordinate congruent with shape of index idx: (idx // stride) % shape per leaf.

    With the default (compact column-major) strides this inverts crd2idx on [0, size).
    Every leaf is reduced, so coordinates are always in range.
    """
    if stride is None:
        stride = prefix_product(shape)
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise IntTupleError(f"index {idx!r} does not match shape {shape!r}")
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if is_tuple(shape):
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride))
    return sym.umod(sym.udiv(idx, stride), shape)
