"""Memory objects and plain data movement."""

from ._stub import surface


@surface
def tile(x, box, coords):
    """The box of shape `box` of a global tensor or smem tile at tile coordinates
    `coords` (element offset = coords * box); of a wgmma accumulator fragment, the column
    block tile(acc, (64, n), (0, j)) (itself an accumulator of width n, e.g. to store an
    epilogue in pieces)."""


@surface
def smem(dtype, shape, stages=1, swizzle="none"):
    """A shared-memory buffer of `stages` copies of `shape`; index `buf[s]` for a stage.
    swizzle: none, 32B, 64B or 128B, or "widest": the widest of those whose rows the tile's
    inner dimension fills (a K x N tile of B whose width is a parameter)."""


@surface
def fragment(dtype, shape, layout, init=None):
    """A register fragment of a warpgroup with an explicit TV layout by name
    (e.g. "wgmma_acc_m64n256"); `init` fills it (e.g. 0.0)."""


@surface
def assign(dst, src):
    """Overwrite a fragment with a value of the same shape and layout (loop-carried state)."""


@surface
def load(src, layout):
    """Vector load of a global or smem tile into a fragment of the named layout."""


@surface
def store(dst, src):
    """Vector store of a fragment to a global or smem tile."""


@surface
def load_indices(src):
    """Load a 1-D int32 global tile as an index vector (e.g. token ids)."""


@surface
def gather(src, rows, col, cols, layout):
    """Rows `rows` (an index vector) of global tensor `src`, `cols` columns at column tile
    `col`, into a fragment."""


@surface
def gather_tma(dst, src, rows, col, bar):
    """TMA gather (four rows per instruction on sm_90 via im2col-free row boxes) into smem."""


@surface
def gather_cp_async(dst, src, rows, col, bar):
    """Warpgroup-collective row gather into a swizzled shared-memory tile: row i of `dst` is
    row rows[i] of global tensor `src` (columns col * C .. of it; rows outside the tensor
    read zeros). Every thread of the warpgroup executes it (never inside elect_one): each
    copies its 16-byte chunks with cp.async (argus.ir.gather_chunks) and arrives once on
    `bar` when they have landed, so `bar` counts 128 arrivals per warpgroup and no
    transaction bytes (mbarrier_init(bar, 128 + the other arrivals)). The copies are
    ordinary (generic-proxy) writes: a wgmma that reads the tile calls fence_proxy_async()
    after waiting on `bar`."""


@surface
def scatter(dst, rows, col, src):
    """Store fragment rows to rows `rows` of `dst`."""


@surface
def atomic_add(dst, src):
    """Atomically add a fragment into a global tile."""
