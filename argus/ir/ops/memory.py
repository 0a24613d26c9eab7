"""Memory objects and plain data movement: global tiles, smem buffers, fragments,
vector loads/stores, gathers, index vectors, atomics."""

from .spec import BAR, FRAG, GTILE, SCALAR, STILE, arg, op

SPECS = [
    op("tile", "memory", arg("tensor", "GlobalTensorType"), arg("coords", *SCALAR, variadic=True),
       results=1, view=True, doc="the box attrs.box of a tensor at tile coordinates"),
    op("smem.alloc", "memory", results=1),
    op("smem.stage", "memory", arg("buffer", "SmemBufferType"), arg("stage", *SCALAR), results=1),
    op("smem.tile", "memory", arg("view", *STILE), arg("coords", *SCALAR, variadic=True),
       results=1, view=True),
    op("frag.alloc", "memory", results=1, doc="attrs: shape, dtype, layout, init"),
    op("frag.slice", "memory", arg("x", *FRAG), arg("block", *SCALAR), results=1,
       doc="columns block * attrs.box[1] .. of a wgmma accumulator, itself an accumulator"),
    op("frag.assign", "memory", arg("dst", *FRAG), arg("src", *FRAG, "imm"), writes=("dst",)),
    op("load", "memory", arg("src", *GTILE, *STILE), results=1, reads=("src",)),
    op("store", "memory", arg("dst", *GTILE, *STILE), arg("src", *FRAG), writes=("dst",),
       reads=("src",)),
    op("indices.load", "memory", arg("src", *GTILE), results=1, reads=("src",)),
    op("gather.load", "memory", arg("src", "GlobalTensorType"), arg("rows", "IndexVectorType"),
       arg("col", *SCALAR), results=1, reads=("src",), doc="rows[i] of src, a box of attrs.cols "
       "columns at column tile col"),
    op("gather.tma", "memory", arg("dst", *STILE), arg("src", "GlobalTensorType"),
       arg("rows", "IndexVectorType"), arg("col", *SCALAR), arg("bar", "BarrierType"),
       reads=("src",), writes=("dst",), asynchronous=True, proxy="async", completes="mbarrier:bar"),
    op("gather.cp_async", "memory", arg("dst", *STILE), arg("src", "GlobalTensorType"),
       arg("rows", "IndexVectorType"), arg("col", *SCALAR), arg("bar", *BAR),
       reads=("src",), writes=("dst",), asynchronous=True, proxy="generic",
       completes="mbarrier:bar", arrives="bar", collective="warpgroup",
       doc="every thread of the warpgroup copies its 16-byte chunks of the gathered rows "
       "(argus.ir.gather_chunks) with cp.async into the swizzled tile, then arrives once on "
       "bar when they have landed (cp.async.mbarrier.arrive.noinc): 128 arrivals, no "
       "transaction bytes; the writes are generic-proxy (a wgmma reading the tile needs a "
       "fence_proxy_async() after the wait)"),
    op("scatter.store", "memory", arg("dst", "GlobalTensorType"), arg("rows", "IndexVectorType"),
       arg("col", *SCALAR), arg("src", *FRAG), writes=("dst",)),
    op("atomic.add", "memory", arg("dst", *GTILE), arg("src", *FRAG), writes=("dst",)),
]
