"""mbarriers: allocation, init, arrive (local or remote), expect-tx, parity wait."""

from .spec import BAR, SCALAR, arg, op

SPECS = [
    op("mbarrier.alloc", "mbarrier", results=1, doc="attrs: count"),
    op("mbarrier.at", "mbarrier", arg("array", "BarrierArrayType"), arg("index", *SCALAR),
       results=1),
    op("mbarrier.init", "mbarrier", arg("bar", *BAR), doc="attrs: arrivals"),
    op("mbarrier.arrive", "mbarrier", arg("bar", *BAR), arg("cta", *SCALAR, optional=True),
       arrives="bar", doc="with cta: arrive on the barrier of that block in the cluster"),
    op("mbarrier.expect_tx", "mbarrier", arg("bar", *BAR), arg("bytes", *SCALAR),
       arrives="bar", doc="arrive and expect that many transaction bytes"),
    op("mbarrier.wait", "mbarrier", arg("bar", *BAR), arg("phase", *SCALAR),
       doc="wait until the phase with this parity has completed"),
]
