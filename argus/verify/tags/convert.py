"""convert_layout: the same logical tile in another register layout.

A conversion renames registers inside each thread and moves no data between threads (the
DSL's meaning of frag.convert, which the interpreter's exact mode shares: an element that
only another thread holds is lost). So every (thread, register) of the new layout must
hold an element that the same thread holds in the old one; this is proved by ENUMERATION
of both thread-value tables (every thread, every register). The accumulator layout of a
16-bit P and the register-A operand layout agree thread by thread, which is why P from
S = Q K^T can feed the second wgmma without shared memory. The tags (and meaning) are
positional, so they pass through unchanged."""

from __future__ import annotations

from functools import lru_cache

from argus.ir.nodes import Op
from argus.verify.finding import Counterexample, ElementTag, Finding

from .reductions import holders
from .values import FragTag, Fragment


@lru_cache(maxsize=None)
def thread_gap(src: str, dst: str, shape: tuple[int, int]):
    """None when every element a thread holds in `dst` it also holds in `src`; else
    (thread, (row, col), the threads that hold it in src), or 'layout'."""
    a, b = holders(src, shape), holders(dst, shape)
    if a is None or b is None:
        return "layout"
    where: dict = {}
    for t, held in a.items():
        for e in held:
            where.setdefault(e, set()).add(t)
    for t in sorted(b):
        for e in b[t]:
            if t not in where.get(e, ()):
                return t, e, tuple(sorted(where.get(e, ())))
    return None


def convert(w, op: Op) -> None:
    x = w.value(op.arg("x"))
    t = op.result.type
    if not isinstance(x, Fragment):
        w.env[op.result] = None
        return
    if w.phase == "check" and len(x.shape) == 2 and x.layout != t.layout:
        gap = thread_gap(x.layout, t.layout, tuple(x.shape))
        if gap == "layout":
            w.not_modelled(op, f"conversions between {x.layout} and {t.layout}")
            w.env[op.result] = Fragment(tuple(t.shape), t.layout, FragTag(
                "unknown", why_unknown="a layout conversion that is not modelled"), op.loc)
            return
        if gap is not None:
            thread, (row, col), owners = gap
            wg = w.role.warpgroup if w.role else None
            if wg is not None and not isinstance(wg, int):   # one walk for every warpgroup:
                wg = w.role.warpgroups[0]    # the threads are the same in each, named in the first
            base = wg * 128 if wg is not None else 0
            held = ", ".join(str(base + o) for o in owners[:4]) or "no thread"
            w.report(Finding(
                "tag.convert", "error",
                f"convert_layout to {t.layout}: thread {base + thread} must hold element "
                f"({row}, {col}), which only thread(s) {held} hold in {x.layout}; a "
                f"conversion moves no data between threads", op.loc, "convert_layout",
                "convert between layouts that agree thread by thread (the accumulator of a "
                "16-bit P and wgmma_a_rs_16bit), or go through shared memory",
                Counterexample(warpgroup=wg, thread=base + thread, warp=(base + thread) // 32,
                               lane=(base + thread) % 32,
                               elements=(ElementTag("x", (row, col),
                                                    {"held by threads": list(owners)},
                                                    {"held by thread": base + thread}),))))
            w.env[op.result] = Fragment(tuple(t.shape), t.layout, FragTag(
                "unknown", why_unknown="a conversion that needs other threads' data"), op.loc)
            return
    w.env[op.result] = Fragment(tuple(t.shape), t.layout, x.tag.copy(), op.loc)
