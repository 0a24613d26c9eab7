"""Algebraic laws of the layout operations, checked as functions on random layouts.

The strategies here are shared with the pycute differential test. Powers of two make
every composition well defined (all divisibility conditions hold); the mixed pools also
produce layouts that the operations must refuse.
"""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argus.layout import (Layout, LayoutError, blocked_product, coalesce, complement,
                          composition, filter_layout, flat_divide, left_inverse,
                          logical_divide, logical_product, make_layout, raked_product,
                          right_inverse, tiled_divide, tiled_product, zipped_divide,
                          zipped_product)
from argus.layout.int_tuple import flatten, is_tuple, product

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

POW2_EXTENTS = st.sampled_from([1, 2, 4, 8])
MIXED_EXTENTS = st.sampled_from([1, 2, 3, 4, 5, 6, 8])
SMALL_EXTENTS = st.sampled_from([1, 2, 4])


@st.composite
def profiles(draw, n_leaves, max_depth=2):
    """A nesting of n_leaves leaves (as a tuple of leaf counts), e.g. (1, (1, 1))."""
    def build(n, depth):
        if n == 1 and (depth == 0 or draw(st.booleans())):
            return 1
        if depth == 0:
            return tuple([1] * n)
        cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=n - 1))) if n > 1 else []
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
        return tuple(build(k, depth - 1) for k in sizes)
    return build(n_leaves, max_depth)


def nest(flat, profile):
    """The flat leaves arranged by profile."""
    it = iter(flat)

    def walk(p):
        return tuple(walk(x) for x in p) if is_tuple(p) else next(it)
    return walk(profile)


@st.composite
def layouts(draw, extents=POW2_EXTENTS, strides=None, max_leaves=4, max_depth=2):
    """Random (possibly nested) layouts; strides default to 0..16 at random."""
    n = draw(st.integers(1, max_leaves))
    profile = draw(profiles(n, max_depth))
    shape = [draw(extents) for _ in range(n)]
    stride_pool = strides if strides is not None else st.integers(0, 16)
    stride = [draw(stride_pool) for _ in range(n)]
    return Layout(nest(shape, profile), nest(stride, profile))


@st.composite
def injective_layouts(draw, extents=POW2_EXTENTS, max_leaves=3, max_depth=2, gaps=(1, 1, 2, 3)):
    """Layouts whose modes, sorted by stride, tile with gaps: the ones complement accepts."""
    n = draw(st.integers(1, max_leaves))
    shape = [draw(extents) for _ in range(n)]
    order = draw(st.permutations(range(n)))
    stride = [0] * n
    current = 1
    for k in order:
        stride[k] = current * draw(st.sampled_from(gaps))
        current = stride[k] * shape[k]
    profile = draw(profiles(n, max_depth))
    return Layout(nest(shape, profile), nest(stride, profile))


def bijective_layouts(extents=POW2_EXTENTS, max_leaves=3):
    """Permutations of [0, size): injective layouts without gaps."""
    return injective_layouts(extents=extents, max_leaves=max_leaves, gaps=(1,))


def image(layout):
    return {layout(i) for i in range(layout.size())}


def extent(layout) -> int:
    """The largest s*d over the non-trivial modes: the range one layout's modes tile."""
    return max((s * d for s, d in zip(flatten(layout.shape), flatten(layout.stride))
                if s > 1 and d > 0), default=1)


def overlapping(b) -> bool:
    """The documented precondition: two non-broadcast modes of b whose ranges [d, d*s) meet."""
    modes = [(d, s) for s, d in zip(flatten(b.shape), flatten(b.stride)) if s > 1 and d > 0]
    return any(d0 <= d1 < d0 * s0 for i, (d0, s0) in enumerate(modes)
               for j, (d1, _) in enumerate(modes) if i != j)


def compatible(r, b_shape) -> bool:
    """r's shape refines b_shape: equal sizes, mode by mode where b_shape is a tuple."""
    if is_tuple(b_shape):
        return (is_tuple(r) and len(r) == len(b_shape)
                and all(compatible(x, y) for x, y in zip(r, b_shape)))
    return product(r) == b_shape


# -- coalesce and filter -----------------------------------------------------------------

@FAST
@given(layouts(extents=MIXED_EXTENTS))
def test_coalesce_preserves_the_function(a):
    c = coalesce(a)
    assert c.size() == a.size()
    assert [c(i) for i in range(a.size())] == [a(i) for i in range(a.size())]
    assert 1 not in flatten(c.shape) or c.shape == 1  # no size-1 mode survives
    pairs = list(zip(flatten(c.shape), flatten(c.stride)))
    assert all(d1 != s0 * d0 for (s0, d0), (_, d1) in zip(pairs, pairs[1:]))  # nothing left to merge


@FAST
@given(layouts(extents=MIXED_EXTENTS, max_leaves=4))
def test_coalesce_by_mode_keeps_each_mode_function(a):
    c = coalesce(a, (1,) * a.rank())
    assert c.rank() == a.rank()
    for i in range(a.rank()):
        assert [c[i](j) for j in range(a[i].size())] == [a[i](j) for j in range(a[i].size())]


@FAST
@given(layouts(extents=MIXED_EXTENTS))
def test_filter_keeps_the_image_and_drops_broadcasts(a):
    f = filter_layout(a)
    assert image(f) == image(a)
    assert 0 not in flatten(f.stride) or f == Layout(1, 0)
    assert f.size() == math.prod(s for s, d in zip(flatten(a.shape), flatten(a.stride)) if d != 0)


# -- composition -------------------------------------------------------------------------

@st.composite
def composable_pairs(draw, extents=POW2_EXTENTS, b_strides=st.sampled_from([0, 1, 2, 4, 8, 16])):
    """(A, B) with B's image inside A's domain (beyond it A o B depends on how A is written:
    coalescing drops size-1 modes, in CuTe as here). A gets an extra mode when too small."""
    b = draw(layouts(extents=extents, strides=b_strides, max_leaves=3))
    a = draw(layouts(extents=extents))
    need = max(image(b)) + 1
    if a.size() < need:
        grow = -(-need // a.size())
        if extents is POW2_EXTENTS:
            grow = 1 << (grow - 1).bit_length()
        a = make_layout(a, Layout(grow, draw(st.sampled_from([1, 2, 4, 8, 16, 32]))))
    return a, b


@FAST
@given(composable_pairs())
def test_composition_is_function_composition(pair):
    a, b = pair
    try:
        r = composition(a, b)
    except LayoutError as err:  # with powers of two only overlapping modes of B are refused
        assert "overlap" in str(err) and overlapping(b)
        return
    assert compatible(r.shape, b.shape)
    assert [r(i) for i in range(b.size())] == [a(b(i)) for i in range(b.size())]


@FAST
@given(composable_pairs(extents=MIXED_EXTENTS, b_strides=st.integers(0, 12)))
def test_composition_is_exact_or_refused(pair):
    """On arbitrary extents composition either is A(B(i)) or raises a LayoutError."""
    a, b = pair
    try:
        r = composition(a, b)
    except LayoutError as err:
        assert "divisibility fails at mode" in str(err) or (
            "overlap" in str(err) and overlapping(b))
        return
    assert compatible(r.shape, b.shape)
    assert [r(i) for i in range(b.size())] == [a(b(i)) for i in range(b.size())]


@FAST
@given(st.lists(composable_pairs(), min_size=1, max_size=3), st.integers(0, 2))
def test_composition_with_a_tiler_acts_by_mode(pairs, extra_modes):
    modes = [p[0] for p in pairs] + [Layout(2, 3)] * extra_modes
    a = make_layout(*modes)
    tiler = tuple(p[1] for p in pairs)
    try:
        r = composition(a, tiler)
    except LayoutError as err:
        assert "overlap" in str(err) and any(overlapping(t) for t in tiler)
        return
    assert r.rank() == a.rank()
    for i, t in enumerate(tiler):
        assert [r[i](j) for j in range(t.size())] == [modes[i](t(j)) for j in range(t.size())]
    for i in range(len(tiler), len(modes)):  # modes past the tiler are kept
        assert r[i] == modes[i]


# -- complement ----------------------------------------------------------------------------

@FAST
@given(injective_layouts(extents=MIXED_EXTENTS), st.integers(1, 300))
def test_complement_is_ordered_disjoint_and_bounded(a, cotarget):
    r = complement(a, cotarget)
    strides = [d for s, d in zip(flatten(r.shape), flatten(r.stride)) if s != 1]
    assert strides == sorted(strides) and len(set(strides)) == len(strides)  # ordered
    assert image(a) & {r(j) for j in range(1, r.size())} == set()  # disjoint beyond 0
    both = make_layout(a, r)
    values = sorted(both(i) for i in range(both.size()))
    assert values == list(range(both.size()))  # (A, R) is a bijection onto [0, N)
    # bounded: N reaches the cotarget and overshoots it by less than A's extent
    assert cotarget <= both.size() < cotarget + extent(a)


@FAST
@given(layouts(extents=MIXED_EXTENTS, max_leaves=3))
def test_complement_refuses_non_injective_layouts(a):
    kept = filter_layout(a)  # broadcast (stride-0) modes add nothing to the image: ignored
    injective = len(image(kept)) == kept.size()
    try:
        complement(a, 64)
    except LayoutError as err:
        assert "not injective" in str(err)
        return
    assert injective


# -- inverses ------------------------------------------------------------------------------

@FAST
@given(layouts(extents=MIXED_EXTENTS))
def test_right_inverse_composes_to_the_identity(a):
    r = right_inverse(a)
    assert [a(r(i)) for i in range(r.size())] == list(range(r.size()))


@FAST
@given(bijective_layouts(extents=MIXED_EXTENTS))
def test_right_inverse_of_a_bijection_is_full(a):
    r = right_inverse(a)
    assert r.size() == a.size()
    assert [a(r(i)) for i in range(a.size())] == list(range(a.size()))


@FAST
@given(injective_layouts(extents=MIXED_EXTENTS))
def test_left_inverse_composes_to_the_identity(a):
    r = left_inverse(a)
    assert [r(a(i)) for i in range(a.size())] == list(range(a.size()))


# -- divide --------------------------------------------------------------------------------

@st.composite
def divisible_pairs(draw):
    """(A, B) with B injective and its extent dividing size(A), powers of two throughout."""
    b = draw(injective_layouts(extents=SMALL_EXTENTS, max_leaves=2, gaps=(1, 2)))
    extra = draw(st.lists(SMALL_EXTENTS, min_size=0, max_size=1))
    factors = [f for f in _pow2_factors(extent(b)) if f != 1] + [e for e in extra if e != 1]
    factors = factors or [1]
    stride = [draw(st.sampled_from([1, 2, 4, 8, 16, 32])) for _ in factors]
    return Layout(tuple(factors), tuple(stride)), b


def _pow2_factors(n):
    out = []
    while n > 1:
        f = min(n, 4)
        out.append(f)
        n //= f
    return out


@FAST
@given(divisible_pairs())
def test_logical_divide_keeps_size_and_image_and_tiles_with_b(pair):
    a, b = pair
    d = logical_divide(a, b)
    assert d.size() == a.size()
    assert image(d) == image(a)
    tile = d[0]
    assert [tile(i) for i in range(b.size())] == [a(b(i)) for i in range(b.size())]
    z = zipped_divide(a, b)
    assert [z(i) for i in range(a.size())] == [d(i) for i in range(a.size())]


@settings(FAST, max_examples=15)
@given(st.lists(divisible_pairs(), min_size=1, max_size=2))
def test_divides_by_mode_regroup_the_same_function(pairs):
    a = make_layout(*(p[0] for p in pairs))
    tiler = tuple(p[1] for p in pairs)
    logical = logical_divide(a, tiler)
    assert logical.size() == a.size() and image(logical) == image(a)
    zipped, tiled, flat = zipped_divide(a, tiler), tiled_divide(a, tiler), flat_divide(a, tiler)
    n_tile = math.prod(t.size() for t in tiler)
    assert zipped[0].size() == n_tile and tiled[0].size() == n_tile
    assert flat.rank() == 2 * len(tiler)
    for m in range(len(tiler)):  # every variant reads tile m and rest m of mode m
        tile_m, rest_m = logical[m][0], logical[m][1]
        z_tile = zipped[0] if len(tiler) == 1 else zipped[0][m]
        z_rest = zipped[1] if len(tiler) == 1 else zipped[1][m]
        for got_tile, got_rest in ((z_tile, z_rest), (tiled[0] if len(tiler) == 1 else tiled[0][m],
                                   tiled[1 + m]), (flat[m], flat[len(tiler) + m])):
            assert got_tile.values() == tile_m.values()
            assert got_rest.values() == rest_m.values()


# -- product -------------------------------------------------------------------------------

@FAST
@given(injective_layouts(max_leaves=2, gaps=(1, 2)), injective_layouts(max_leaves=2, gaps=(1, 2)))
def test_logical_product_keeps_a_and_repeats_it_disjointly(a, b):
    p = logical_product(a, b)
    assert p.size() == a.size() * b.size()
    assert p[0] == a
    copies = p[1]
    for j in range(b.size()):  # copy j of A sits at offset copies(j)
        assert [p(i, j) for i in range(a.size())] == [a(i) + copies(j) for i in range(a.size())]
    assert {copies(j) for j in range(b.size())} & image(a) <= {0}  # offsets avoid A's image


@FAST
@given(injective_layouts(max_leaves=2, gaps=(1, 2)), injective_layouts(SMALL_EXTENTS, max_leaves=3, gaps=(1, 2)))
def test_logical_product_of_injective_layouts_is_injective(a, b):
    p = logical_product(a, b)
    assert len(image(p)) == p.size() == a.size() * b.size()
    assert zipped_product(a, b).values() == p.values()
    assert tiled_product(a, b).values() == p.values()


@FAST
@given(bijective_layouts(max_leaves=2), st.integers(1, 5))
def test_logical_product_with_an_int_lays_copies_side_by_side(a, n):
    # (pycute's int branch calls logical_divide; ours means n:1, n copies of A)
    p = logical_product(a, n)
    assert p.size() == a.size() * n
    assert p.values() == logical_product(a, Layout(n, 1)).values()


def _rank2(layout):
    modes = list(layout.modes()) + [Layout(1, 0)] * (2 - layout.rank())
    return make_layout(*modes)


@FAST
@given(injective_layouts(SMALL_EXTENTS, max_leaves=2, max_depth=1, gaps=(1, 2)),
       injective_layouts(SMALL_EXTENTS, max_leaves=2, max_depth=1, gaps=(1, 2)))
def test_blocked_and_raked_products_interleave_mode_by_mode(block, tiles):
    pa, pb = _rank2(block), _rank2(tiles)
    copies = logical_product(pa, pb)[1]
    blocked, raked = blocked_product(pa, pb), raked_product(pa, pb)
    assert blocked.rank() == raked.rank() == 2
    sa = [pa[i].size() for i in range(2)]
    sb = [pb[i].size() for i in range(2)]
    for a0 in range(sa[0]):
        for a1 in range(sa[1]):
            for b0 in range(sb[0]):
                for b1 in range(sb[1]):
                    want = pa(a0, a1) + copies(b0, b1)
                    # blocked: block coordinate fastest within each mode; raked: tile coordinate
                    assert blocked(a0 + sa[0] * b0, a1 + sa[1] * b1) == want
                    assert raked(b0 + sb[0] * a0, b1 + sb[1] * a1) == want
    assert image(blocked) == image(raked) == image(logical_product(pa, pb))
