"""gather_cp_async -> CUDA: every thread's cp.async of 16 bytes lands where the TMA image of
the tile has that chunk (the address the lowering emits, evaluated for every thread and copy,
against the TMA box image of argus.layout that the interpreter's exact mode uses), one
arrival per thread after its copies, the consumer's proxy fence, the launch assumption on the
row pitch; and the gate-up kernel with it reads as intended."""

from __future__ import annotations

import re

import numpy as np
import pytest

from argus.codegen import generate
from argus.codegen.lower.gather import chunk_address
from argus.codegen.smem_tiles import stage_geometry
from argus.codegen.values import SmemTile
from argus.interp.machine.smem_image import tma_image
from argus.ir import gather_chunks
from argus.ir.types import DType
from argus.ops.library import KERNEL_DIR, kernel_ir

BASE = 3 * 1024          # a stage base: the runtime rounds the shared-memory base to 1024 B


def _swizzle(bits):
    return lambda a: a ^ ((a >> 3) & (((1 << bits) - 1) << 4))


def _evaluate(expr: str) -> int:
    m = re.fullmatch(r"argus::swizzle_address<(\d)>\((.*)\)", expr)
    if m:
        return _swizzle(int(m.group(1)))(_evaluate(m.group(2)))
    return eval(expr.replace("/", "//"), {})        # integers only: + * / % ( )


@pytest.mark.parametrize("rows, cols, swizzle, band", [
    (128, 64, "128B", None), (128, 128, "128B", None), (64, 64, "128B", (64, 64)),
    (128, 32, "64B", None), (128, 64, "none", None)])
def test_every_chunk_lands_where_the_tma_image_has_it(rows, cols, swizzle, band):
    geometry = stage_geometry((rows, cols), 2, swizzle)
    first = 0
    if band is not None:
        first, n = band
        geometry = geometry.band(first, n)
    dst = SmemTile("x_s", str(BASE), DType.bf16, geometry)
    # where TMA boxes put element (r, c) of the stage (the tile convention, argus.layout)
    image = tma_image(BASE, (geometry.chunk_stride // geometry.span, cols), 2, swizzle, first,
                      first + geometry.rows)
    row_bytes = cols * 2
    for t in range(128):
        for i in range(gather_chunks.copies_per_thread(geometry.rows, row_bytes)):
            r, c = gather_chunks.chunk_of(t, i, geometry.rows, row_bytes)
            got = _evaluate(chunk_address(dst, str(r), str(c)))
            want = image[r, c * 8:(c + 1) * 8]
            assert got == want.min() and want.max() - want.min() == 14, (t, i, r, c)


@pytest.fixture(scope="module")
def warpgroup_source():
    return generate(kernel_ir("moe_gate_up", "moe_gate_up", GATHER="warpgroup"))


def test_the_gate_up_kernel_gathers_with_every_producer_thread(warpgroup_source):
    src = warpgroup_source.source
    assert "argus::mbarrier_init((full + 8 * (s)), 129);" in src
    gather = src[src.index("gather_cp_async(x_s[s]"):src.index("argus::cp_async_arrive_noinc")]
    assert "#pragma unroll" in gather and "for (int argus_i = 0; argus_i < 8; ++argus_i)" in gather
    assert "__shfl_sync(0xffffffffu, argus_grow, argus_q / 8)" in gather
    assert "argus::swizzle_address<3>(" in gather and "argus_in ? 16u : 0u" in gather
    # the gather is outside the elect_one that issues the weights' TMA
    elect = src.rindex("elect_one(warpgroup)", 0, src.index("gather_cp_async(x_s[s]"))
    assert src[elect:src.index("gather_cp_async(x_s[s]")].count("}") >= 1
    waits = [m.start() for m in re.finditer(r"mbarrier_wait_parity\(\(full", src)]
    assert waits and all("argus::fence_proxy_async_shared();" in src[w:w + 400] for w in waits)


@pytest.mark.parametrize("wg", [2, 1])
def test_each_thread_reads_its_row_index_once_per_tile_not_once_per_k_step(wg):
    """The token index of warp w's lane l (its warp's row l: 32w + l of a 128-row tile,
    16w + l of a decode batch's 64-row one) is read where the tile's index vector is loaded
    (IndexVector.lane), before the k loop; the gather inside the loop takes it from that
    register instead of loading it again every step (an L2 round trip a step)."""
    src = generate(kernel_ir("moe_gate_up", "moe_gate_up", GATHER="warpgroup", WG=wg,
                             CONSUMERS=tuple(range(1, wg + 1)))).source
    load = src.index("const int tokens_lane = ")
    row = "argus_lane" if wg == 2 else "(argus_lane / 32) * 16 + argus_lane % 32"
    assert row in src[load:src.index(";", load)]
    k_loop = src.index("for (int k = 0;", load)
    gather = src.index("gather_cp_async(x_s[s]", k_loop)
    assert load < k_loop < gather
    body = src[gather:gather + 2000]
    assert "const int argus_grow = " in body
    assert "ids" not in body[body.index("argus_grow"):body.index("#pragma unroll")]


def test_the_launch_checks_the_row_pitch_at_the_gathers_line(warpgroup_source):
    exprs = {e: at for e, at in warpgroup_source.assumptions}
    lines = (KERNEL_DIR / "moe_gate_up.py").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "gather_cp_async(x_s[s]" in text)
    assert exprs.get("(K % 8 == 0)", "").endswith(f"moe_gate_up.py:{line}")
    tma = generate(kernel_ir("moe_gate_up", "moe_gate_up"))
    assert "(K % 8 == 0)" not in dict(tma.assumptions) and "cp_async" not in tma.source.split(
        "extern \"C\"")[1]
