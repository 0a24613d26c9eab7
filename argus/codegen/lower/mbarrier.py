"""mbarriers: an array of 8-byte barriers in shared memory, addressed by index."""

from __future__ import annotations

from ..values import Barrier, Barriers


def _alloc(ctx, op):
    count = op.attrs["count"]
    offset = ctx.allocate_smem(8 * count, 8)
    name = ctx.em.name(op.result.name)
    ctx.em.line(f"const argus::u32 {name} = argus_smem + {offset};  // {count} mbarriers")
    ctx.bind(op.result, Barriers(op.result.name, name, count))


def _at(ctx, op):
    array = ctx.get(op.arg("array"), op)
    index = ctx.expr(op.arg("index"), op)
    ctx.bind(op.result, Barrier(array.name, f"({array.address} + 8 * ({index}))", index))


def _init(ctx, op):
    bar = ctx.get(op.arg("bar"), op)
    ctx.em.line(f"argus::mbarrier_init({bar.address}, {op.attrs['arrivals']});")


def _arrive(ctx, op):
    bar = ctx.get(op.arg("bar"), op)
    cta = op.arg("cta")
    if cta is not None:
        ctx.em.line(f"argus::mbarrier_arrive_remote({bar.address}, "
                    f"{ctx.expr(cta, op)});")
    else:
        ctx.em.line(f"argus::mbarrier_arrive({bar.address});")


def _expect_tx(ctx, op):
    bar = ctx.get(op.arg("bar"), op)
    ctx.em.line(f"argus::mbarrier_arrive_expect_tx({bar.address}, "
                f"{ctx.expr(op.arg('bytes'), op)});")


def _wait(ctx, op):
    bar = ctx.get(op.arg("bar"), op)
    parity = ctx.expr(op.arg("phase"), op)
    ctx.em.line(f"argus::mbarrier_wait_parity({bar.address}, ({parity}) & 1, "
                f"\"{bar.array} at {op.loc.file.rsplit('/', 1)[-1]}:{op.loc.line}\");")


RULES = {"mbarrier.alloc": _alloc, "mbarrier.at": _at, "mbarrier.init": _init,
         "mbarrier.arrive": _arrive, "mbarrier.expect_tx": _expect_tx, "mbarrier.wait": _wait}
