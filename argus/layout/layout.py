"""CuTe shape:stride layouts and their algebra (coalesce, composition, complement, ...).

A `Layout` maps a coordinate (or a flat colexicographic index) to an offset: the sum of
coordinate x stride. The algebra builds new layouts whose *functions* are defined by the
operations (R = A o B means R(i) == A(B(i))); the representations follow CuTe so that
results agree with CuTe/pycute after coalescing.

Evaluation works on ints and z3 bit-vector terms; the algebra itself (composition, ...)
needs static integer shapes and strides and says so otherwise.
"""

from __future__ import annotations

from . import int_tuple as it
from . import symbolic as sym


class LayoutError(ValueError):
    """A layout operation whose preconditions fail; the message says which mode and why."""


def _check_int_tuple(t, what: str, positive: bool):
    if it.is_tuple(t):
        for x in t:
            _check_int_tuple(x, what, positive)
        return
    if not sym.is_sym_int(t):
        raise LayoutError(f"{what} leaf {t!r} is not an int or a z3 bit-vector")
    if positive and it.is_int(t) and t < 1:
        raise LayoutError(f"{what} leaf {t} must be at least 1 (a mode has a positive extent)")


class Layout:
    """shape:stride; the default stride is compact column-major (first mode fastest)."""

    __slots__ = ("shape", "stride")

    def __init__(self, shape, stride=None):
        if isinstance(shape, list):
            shape = _to_tuple(shape)
        if isinstance(stride, list):
            stride = _to_tuple(stride)
        _check_int_tuple(shape, "shape", positive=True)
        if stride is None:
            stride = it.prefix_product(shape)
        _check_int_tuple(stride, "stride", positive=False)
        if not it.congruent(shape, stride):
            raise LayoutError(f"stride {_fmt(stride)} is not congruent with shape {_fmt(shape)} "
                              "(each shape leaf needs exactly one stride leaf)")
        self.shape = shape
        self.stride = stride

    # -- structure ----------------------------------------------------------------------
    def size(self):
        return it.product(self.shape)

    def cosize(self):
        """One past the largest offset: L(size - 1) + 1 (for non-negative strides)."""
        return _cosize(self)

    def rank(self) -> int:
        return it.rank(self.shape)

    def depth(self) -> int:
        return it.depth(self.shape)

    def __len__(self) -> int:
        return self.rank()

    def __getitem__(self, i) -> "Layout":
        """Mode i (a sub-layout); on a rank-1 leaf layout, mode 0 is the layout itself."""
        if not it.is_tuple(self.shape):
            if i in (0, -1):
                return self
            raise IndexError(f"layout {self} has one mode; mode {i} does not exist")
        return Layout(self.shape[i], self.stride[i])

    def modes(self) -> tuple["Layout", ...]:
        return tuple(self[i] for i in range(self.rank()))

    def __iter__(self):
        return iter(self.modes())

    # -- function -----------------------------------------------------------------------
    def __call__(self, *args):
        """L(i) for a flat index i, L(c) for a congruent coordinate c, or L(c0, c1, ...)."""
        crd = args[0] if len(args) == 1 else tuple(args)
        return it.crd2idx(crd, self.shape, self.stride)

    def values(self) -> list:
        """L(i) for every i in [0, size) (static layouts only)."""
        return [self(i) for i in range(_static_size(self, "values"))]

    # -- identity -----------------------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Layout):
            return NotImplemented
        return _same(self.shape, other.shape) and _same(self.stride, other.stride)

    def __hash__(self):
        return hash((str(self.shape), str(self.stride)))

    def __repr__(self):
        return _fmt(self.shape) + ":" + _fmt(self.stride)

    __str__ = __repr__


def _same(a, b) -> bool:
    if it.is_tuple(a) or it.is_tuple(b):
        return it.is_tuple(a) and it.is_tuple(b) and len(a) == len(b) and all(
            _same(x, y) for x, y in zip(a, b))
    if sym.is_symbolic(a) or sym.is_symbolic(b):
        return sym.is_symbolic(a) and sym.is_symbolic(b) and a.eq(b)
    return a == b


def _to_tuple(x):
    return tuple(_to_tuple(v) for v in x) if isinstance(x, (list, tuple)) else x


def _fmt(t) -> str:
    """CuTe notation of an int tuple: 4, (4,8), ((2,4),3); a 1-tuple prints as (4)."""
    if it.is_tuple(t):
        return "(" + ",".join(_fmt(x) for x in t) + ")"
    return str(t)


def _cosize(layout: Layout):
    shape, stride = it.flatten(layout.shape), it.flatten(layout.stride)
    total = 1
    for s, d in zip(shape, stride):
        if sym.is_symbolic(s) or sym.is_symbolic(d):
            total = sym.add(total, sym.mul(s - 1, d))
        else:
            total += (s - 1) * abs(d)
    return total


def _static_size(layout: Layout, what: str) -> int:
    size = layout.size()
    if not it.is_int(size):
        raise LayoutError(f"{what} needs a static size; {layout} has a symbolic shape")
    return size


def _require_static(layout: Layout, what: str):
    for leaf in it.flatten(layout.shape) + it.flatten(layout.stride):
        if not it.is_int(leaf):
            raise LayoutError(f"{what} needs integer shapes and strides; {layout} has the "
                              f"symbolic leaf {leaf} (evaluate it instead, or make it static)")


def make_layout(*layouts) -> Layout:
    """The layout whose modes are the given layouts (concatenation, one level up)."""
    if len(layouts) == 1 and not isinstance(layouts[0], Layout):
        layouts = tuple(layouts[0])
    for x in layouts:
        if not isinstance(x, Layout):
            raise LayoutError(f"make_layout takes Layouts, got {x!r}")
    return Layout(tuple(x.shape for x in layouts), tuple(x.stride for x in layouts))


def _from_modes(pairs) -> Layout:
    """A flat layout from (shape, stride) pairs; one pair gives a leaf, none gives 1:0."""
    pairs = list(pairs)
    if not pairs:
        return Layout(1, 0)
    if len(pairs) == 1:
        return Layout(*pairs[0])
    return Layout(tuple(s for s, _ in pairs), tuple(d for _, d in pairs))


def _flat_pairs(layout: Layout):
    return list(zip(it.flatten(layout.shape), it.flatten(layout.stride)))


def _as_layout(x, what: str) -> Layout:
    if isinstance(x, Layout):
        return x
    if it.is_int(x):
        return Layout(x, 1)
    raise LayoutError(f"{what}: expected a Layout or an int, got {x!r}")


# ---------------------------------------------------------------------------------------
# coalesce and filter


def coalesce(layout: Layout, profile=None) -> Layout:
    """The same function with as few modes as possible.

    Drops size-1 modes and merges s0:d0, s1:d1 into s0*s1:d0 when d1 == s0*d0. With a
    tuple `profile`, mode i is coalesced by profile[i] and modes past the profile are
    kept as they are (so coalesce(L, (1, 1)) coalesces each of two modes on its own).
    """
    if it.is_tuple(profile):
        if layout.rank() < len(profile):
            raise LayoutError(f"coalesce: profile {profile} has more modes than {layout}")
        modes = [coalesce(layout[i], profile[i]) for i in range(len(profile))]
        modes += [layout[i] for i in range(len(profile), layout.rank())]
        return make_layout(*modes)
    merged: list[tuple] = []
    for s, d in _flat_pairs(layout):
        if it.is_int(s) and s == 1:
            continue
        if merged:
            ps, pd = merged[-1]
            if all(it.is_int(v) for v in (ps, pd, d)) and d == ps * pd:
                merged[-1] = (ps * s, pd)
                continue
        merged.append((s, d))
    return _from_modes(merged)


def filter_zeros(layout: Layout) -> Layout:
    """Stride-0 modes replaced by 1:0 (same profile, the broadcast modes emptied)."""
    def walk(s, d):
        if it.is_tuple(s):
            parts = [walk(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return (1, 0) if (it.is_int(d) and d == 0) else (s, d)
    return Layout(*walk(layout.shape, layout.stride))


def filter_layout(layout: Layout) -> Layout:
    """CuTe's filter: coalesce without stride-0 and size-1 modes (the image, compacted)."""
    return coalesce(filter_zeros(layout))


# ---------------------------------------------------------------------------------------
# composition


def composition(a: Layout, b) -> Layout:
    """R = A o B: R(i) == A(B(i)) for every i in B's domain, R compatible with B.

    b is a Layout, an int n (meaning n:1), or a tuple tiler whose element i is composed
    with mode i of A (modes of A past the tiler stay as they are; None keeps a mode).
    """
    if it.is_tuple(b):
        if len(b) > a.rank():
            raise LayoutError(f"composition: tiler {b} has {len(b)} modes but {a} has only "
                              f"{a.rank()}")
        modes = [a[i] if b[i] is None else composition(a[i], b[i]) for i in range(len(b))]
        modes += [a[i] for i in range(len(b), a.rank())]
        return make_layout(*modes)
    b = _as_layout(b, "composition")
    _require_static(a, "composition")
    _require_static(b, "composition")
    if it.is_tuple(b.shape):
        _check_modes_disjoint(a, b)
        return make_layout(*(composition(a, mode) for mode in b.modes()))
    return _compose_leaf(a, b.shape, b.stride, b)


def _check_modes_disjoint(a: Layout, b: Layout):
    """A o B is built mode by mode of B, which is exact only if A adds up across B's modes.

    It does when B's (non-broadcast) modes cover disjoint stride ranges, or when all of
    B's image lies where A is linear (A's first coalesced mode, or A has only one mode).
    """
    pairs = _flat_pairs(coalesce(a))
    if len(pairs) == 1 or b.cosize() <= pairs[0][0]:
        return
    modes = sorted((d, s, k) for k, (s, d) in enumerate(_flat_pairs(b)) if s != 1 and d != 0)
    for (d0, s0, k0), (d1, s1, k1) in zip(modes, modes[1:]):
        if d1 < d0 * s0:
            raise LayoutError(
                f"composition {a} o {b}: leaf modes {k0} ({s0}:{d0}) and {k1} ({s1}:{d1}) of B "
                f"overlap (the first spans strides up to {d0 * s0} > {d1}), so A may carry "
                "between them and A o B is not A composed mode by mode; use a B whose modes "
                "cover disjoint stride ranges")


def _compose_leaf(a: Layout, size: int, stride: int, b: Layout) -> Layout:
    """A o (size:stride): divide `stride` out of A's modes, then keep `size` of what is left."""
    if stride == 0 or size == 1:
        return Layout(size, 0)
    if stride < 0:
        raise LayoutError(f"composition with {b}: negative strides in B are not supported")
    pairs = _flat_pairs(coalesce(a))
    out = []
    rest_size, rest_stride = size, stride
    for k, (s, d) in enumerate(pairs[:-1]):
        if rest_size == 1:
            break
        if s % rest_stride != 0 and rest_stride % s != 0:
            raise LayoutError(
                f"composition {a} o {b}: stride divisibility fails at mode {k} of coalesced A "
                f"{_from_modes(pairs)} (shape {s}): the stride still to divide out is "
                f"{rest_stride}, and neither {s} nor {rest_stride} divides the other")
        take = min(max(1, s // rest_stride), rest_size)
        if rest_size % take != 0:
            raise LayoutError(
                f"composition {a} o {b}: shape divisibility fails at mode {k} of coalesced A "
                f"{_from_modes(pairs)} (shape {s}): B takes {take} elements of it but its "
                f"remaining size {rest_size} is not a multiple of {take}")
        if take != 1:
            out.append((take, rest_stride * d))
        rest_size //= take
        rest_stride = it.ceil_div(rest_stride, s)
    if rest_size != 1 or not out:
        out.append((rest_size, rest_stride * pairs[-1][1]))
    return _from_modes(out)


# ---------------------------------------------------------------------------------------
# complement and inverses


def complement(a: Layout, cotarget=None) -> Layout:
    """The layout that fills the gaps of A's image up to cotarget (default cosize(A)).

    Ordered (strides increasing), its image meets A's only at 0, and (A, R) is a bijection
    onto [0, N) with cotarget <= N <= round_up(cotarget, cosize(A)). A must be injective
    with modes that tile once sorted by stride.
    """
    _require_static(a, "complement")
    if cotarget is None:
        cotarget = a.cosize()
    if isinstance(cotarget, Layout):
        cotarget = cotarget.size()
    if not it.is_int(cotarget) or cotarget < 1:
        raise LayoutError(f"complement: cotarget {cotarget!r} must be a positive int")
    pairs = sorted((d, s) for s, d in _flat_pairs(filter_layout(a)) if s != 1 and d != 0)
    for d, s in pairs:
        if d < 0:
            raise LayoutError(f"complement of {a}: negative stride {d} (mode {s}:{d}); "
                              "only non-negative strides can be complemented")
    out = []
    current = 1
    for d, s in pairs:
        if d % current != 0:
            raise LayoutError(
                f"complement of {a}: mode {s}:{d} starts at stride {d}, which is not a "
                f"multiple of {current}, the extent covered by the modes of smaller stride; "
                "A is not injective (or its modes do not tile), so it has no complement")
        out.append((d // current, current))
        current = s * d
    out.append((it.ceil_div(cotarget, current), current))
    return coalesce(_from_modes(out))


def right_inverse(layout: Layout) -> Layout:
    """R with L(R(i)) == i for i in [0, size(R)), R as large as L's contiguous image prefix.

    Follows strides from 1: the mode of stride 1, then the one of stride equal to the
    extent covered so far, and so on (stride-0 and size-1 modes never take part).
    """
    _require_static(layout, "right_inverse")
    flat = coalesce(layout)
    shapes, strides = it.flatten(flat.shape), it.flatten(flat.stride)
    positions = it.flatten(it.prefix_product(flat.shape))
    out = []
    current = 1
    used = set()
    while True:
        nxt = next((k for k in range(len(shapes)) if k not in used and shapes[k] != 1
                    and strides[k] == current), None)
        if nxt is None:
            break
        used.add(nxt)
        out.append((shapes[nxt], positions[nxt]))
        current *= shapes[nxt]
    return coalesce(_from_modes(out))


def left_inverse(layout: Layout) -> Layout:
    """R with R(L(i)) == i for every i in [0, size(L)); L must be injective."""
    _require_static(layout, "left_inverse")
    try:
        filled = make_layout(layout, complement(layout))
    except LayoutError as err:
        raise LayoutError(f"left_inverse of {layout}: the layout must be injective ({err})") \
            from None
    return right_inverse(filled)


# ---------------------------------------------------------------------------------------
# divide and product


def _by_mode(op, a: Layout, tiler, name: str) -> Layout:
    if len(tiler) > a.rank():
        raise LayoutError(f"{name}: tiler {tiler} has {len(tiler)} modes but {a} has only "
                          f"{a.rank()}")
    modes = [a[i] if tiler[i] is None else op(a[i], tiler[i]) for i in range(len(tiler))]
    modes += [a[i] for i in range(len(tiler), a.rank())]
    return make_layout(*modes)


def logical_divide(a: Layout, b) -> Layout:
    """A o (B, complement(B, size A)): mode 0 is the tile B, mode 1 runs over the tiles."""
    if it.is_tuple(b):
        return _by_mode(logical_divide, a, b, "logical_divide")
    b = _as_layout(b, "logical_divide")
    _require_static(a, "logical_divide")
    return composition(a, make_layout(b, complement(b, a.size())))


def _unzip(layout: Layout, tiler) -> tuple[list[Layout], list[Layout]]:
    """(tile modes, rest modes) of a by-mode divided/multiplied layout."""
    if it.is_tuple(tiler):
        tiles = [layout[i][0] for i in range(len(tiler))]
        rests = [layout[i][1] for i in range(len(tiler))]
        rests += [layout[i] for i in range(len(tiler), layout.rank())]
        return tiles, rests
    return [layout[0]], [layout[1]]


def _zip(layout: Layout, tiler) -> Layout:
    tiles, rests = _unzip(layout, tiler)
    return make_layout(_group(tiles), _group(rests))


def _group(modes: list[Layout]) -> Layout:
    return modes[0] if len(modes) == 1 else make_layout(*modes)


def zipped_divide(a: Layout, b) -> Layout:
    """((Tile...), (Rest...)): mode 0 is A o B, mode 1 indexes the tiles."""
    return _zip(logical_divide(a, b), b)


def tiled_divide(a: Layout, b) -> Layout:
    """((Tile...), Rest0, Rest1, ...)."""
    tiles, rests = _unzip(logical_divide(a, b), b)
    return make_layout(_group(tiles), *rests)


def flat_divide(a: Layout, b) -> Layout:
    """(Tile0, Tile1, ..., Rest0, Rest1, ...)."""
    tiles, rests = _unzip(logical_divide(a, b), b)
    return make_layout(*tiles, *rests)


def logical_product(a: Layout, b) -> Layout:
    """(A, complement(A, size A * cosize B) o B): B's layout of copies of A.

    An int b means b:1 (b copies laid side by side); a tuple applies by mode.
    """
    if it.is_tuple(b):
        return _by_mode(logical_product, a, b, "logical_product")
    b = _as_layout(b, "logical_product")
    _require_static(a, "logical_product")
    _require_static(b, "logical_product")
    return make_layout(a, composition(complement(a, a.size() * b.cosize()), b))


def zipped_product(a: Layout, b) -> Layout:
    """((A modes...), (B modes...)) of the by-mode logical product."""
    return _zip(logical_product(a, b), b)


def tiled_product(a: Layout, b) -> Layout:
    """((A modes...), B0, B1, ...)."""
    tiles, rests = _unzip(logical_product(a, b), b)
    return make_layout(_group(tiles), *rests)


def _padded(layout: Layout, r: int) -> Layout:
    modes = list(layout.modes()) + [Layout(1, 0)] * (r - layout.rank())
    return make_layout(*modes)


def _interleaved_product(block: Layout, layout: Layout, block_first: bool) -> Layout:
    block, layout = _as_layout(block, "product"), _as_layout(layout, "product")
    r = max(block.rank(), layout.rank())
    pa, pb = _padded(block, r), _padded(layout, r)
    product_ = logical_product(pa, pb)
    copies = product_[1]
    modes = []
    for i in range(r):
        pair = (pa[i], copies[i]) if block_first else (copies[i], pa[i])
        modes.append(make_layout(*pair))
    return coalesce(make_layout(*modes), (1,) * r)


def blocked_product(block: Layout, layout: Layout) -> Layout:
    """Mode i is (block mode i, layout mode i): whole blocks repeated by `layout`.

    Rank-sensitive: both are padded with 1:0 modes to the larger rank first.
    """
    return _interleaved_product(block, layout, block_first=True)


def raked_product(block: Layout, layout: Layout) -> Layout:
    """Mode i is (layout mode i, block mode i): the copies interleave element by element."""
    return _interleaved_product(block, layout, block_first=False)
