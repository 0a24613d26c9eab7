"""TMA bulk tensor copies of a box, with cluster multicast."""

from .spec import BAR, GTILE, SCALAR, STILE, Contract, arg, op

SPECS = [
    op("tma.load", "tma", arg("dst", *STILE), arg("src", *GTILE), arg("bar", *BAR),
       arg("multicast", *SCALAR, optional=True), reads=("src",), writes=("dst",),
       asynchronous=True, proxy="async", completes="mbarrier:bar",
       contracts=(Contract("box_fits", "dst.shape == src.box"),
                  Contract("tx_bytes", "bar expects nbytes(dst) per receiving block"))),
    op("tma.store", "tma", arg("dst", *GTILE), arg("src", *STILE), reads=("src",),
       writes=("dst",), asynchronous=True, proxy="async", completes="tma.store_wait",
       contracts=(Contract("box_fits", "src.shape == dst.box"),
                  Contract("proxy_fence", "a fence.proxy_async orders earlier smem writes"))),
    op("tma.store_commit", "tma"),
    op("tma.store_wait", "tma", doc="attrs: pending"),
]
