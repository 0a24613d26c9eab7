"""Warpgroup MMA: operands from shared memory or registers, fence/commit/wait."""

from .spec import FRAG, STILE, Contract, arg, op

SPECS = [
    op("wgmma.fence", "wgmma"),
    op("wgmma.mma", "wgmma", arg("acc", *FRAG), arg("a", *STILE, *FRAG), arg("b", *STILE),
       reads=("acc", "a", "b"), writes=("acc",), asynchronous=True, proxy="async",
       completes="wgmma.wait",
       contracts=(Contract("k_match", "A.k == B.k for every k step"),
                  Contract("rows", "acc.row == A.row"), Contract("cols", "acc.col == B.row")),
       doc="acc[m, n] += sum_k a[m, k] * b[n, k]; attrs: m, n, k"),
    op("wgmma.commit", "wgmma"),
    op("wgmma.wait", "wgmma", doc="attrs: pending (groups left in flight)"),
]
