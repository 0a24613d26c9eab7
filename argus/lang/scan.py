"""Device-side routing around `prefix_sum` (argus.lang.math): the entries of an index
vector as uniform scalars, padding of per-group counts, and the row segment of a global
tensor that one group owns (grouped GEMMs in the style of torch._grouped_mm)."""

from ._stub import surface


@surface
def element(v, i):
    """Entry `i` of an index vector or of a 1-D int32 fragment as a uniform scalar (the same
    value in every thread), e.g. the first row of expert e: element(prefix_sum(counts), e)."""


@surface
def to_indices(x):
    """A 1-D int32 fragment as an index vector (e.g. computed slots, to scatter() to)."""


@surface
def round_up(v, multiple):
    """Each entry of an index vector rounded up to a multiple of the compile-time int
    `multiple`: per-group counts padded to whole tiles, so that
    prefix_sum(round_up(counts, BM)) // BM is each group's first tile."""


@surface
def segment(x, start, rows):
    """Rows [start, start + rows) of global tensor `x` as a tensor of `rows` rows (start and
    rows are uniform scalars, e.g. from element()). Tiles of it are in tile coordinates
    relative to `start`; a box reaching past its last row reads zeros there (loads, TMA) and
    is not written there (stores), so a group whose row count is not a multiple of the tile
    has its tail rows masked. coord() of its elements names the rows of `x`."""
