"""Rules for mbarriers."""

from __future__ import annotations

from argus.input_limits import MAX_MBARRIER_ARRAY
from argus.ir.types import BarrierArrayType, BarrierType
from argus.limits import MBARRIER_BYTES, SMEM_PER_BLOCK

from .base import Args, rule

ONE = "one mbarrier: index the array, e.g. full[s]"


def barrier(a: Args, name: str = "bar"):
    x = a.get(name)
    if hasattr(x, "type") and isinstance(x.type, BarrierArrayType):
        a.fail(name, f"{x.name} is an array of {x.type.count} mbarriers", f"pass {x.name}[s]")
    return a.value(name, BarrierType, what=ONE)


@rule("mbarrier")
def mbarrier(fx, a: Args):
    count = a.static_int("count", minimum=1)
    if count * MBARRIER_BYTES > SMEM_PER_BLOCK:
        a.fail("count", f"{count} mbarriers are {count * MBARRIER_BYTES} B, over the "
               f"{SMEM_PER_BLOCK} B of shared memory a Hopper block can have",
               "one mbarrier per pipeline stage: a few, not thousands")
    if count > MAX_MBARRIER_ARRAY:
        a.fail("count", f"{count} mbarriers in one array, over the {MAX_MBARRIER_ARRAY} the "
               f"verifier checks (each is proved apart)",
               "one mbarrier per pipeline stage and role: a few, not hundreds")
    return fx.emit("mbarrier.alloc", (), a.call, BarrierArrayType(count), {"count": count})


@rule("mbarrier_init")
def mbarrier_init(fx, a: Args):
    bar = barrier(a)
    arrivals = a.static_int("arrivals", minimum=1)
    return fx.emit("mbarrier.init", (bar,), a.call, attrs={"arrivals": arrivals})


@rule("arrive")
def arrive(fx, a: Args):
    bar = barrier(a)
    cta = a.get("cta")
    if cta is None:
        operands = (bar,)
    else:
        cta, size = a.cluster_rank("cta", "a remote arrive (cta=)")
        if isinstance(cta, int) and not 0 <= cta < size:
            a.fail("cta", f"CTA {cta} is not in the cluster of {size} blocks",
                   f"name a rank in 0..{size - 1}, e.g. cta=1 - cluster_rank()")
        operands = (bar, cta)
    return fx.emit("mbarrier.arrive", operands, a.call)


@rule("expect_tx")
def expect_tx(fx, a: Args):
    bar = barrier(a)
    nbytes = a.scalar("bytes")
    if isinstance(nbytes, int) and nbytes <= 0:
        a.fail("bytes", f"expect_tx of {nbytes} bytes", "the byte count of the TMA boxes")
    return fx.emit("mbarrier.expect_tx", (bar, nbytes), a.call)


@rule("wait")
def wait(fx, a: Args):
    bar = barrier(a)
    phase = a.scalar("phase")
    if isinstance(phase, int) and phase not in (0, 1):
        a.fail("phase", f"a parity is 0 or 1, got {phase}", "phase = (k // S) & 1")
    return fx.emit("mbarrier.wait", (bar, phase), a.call)
