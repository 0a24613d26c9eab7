"""`walked(w)` in a schedule's body: a running sum the schedule declares before its tile
loop (0 at the block's first tile) and the op reads, then adds this tile's weight to; the
interpreter keeps the same sum per warpgroup (interp/ops/structure.py). The IR prints and
reads the op back like any other."""

from __future__ import annotations

import re

from argus.codegen import generate
from argus.frontend import parse_source
from argus.ir.printer import format_kernel
from argus.ir.reader import read_kernel

SRC = '''from argus.lang import *


@kernel(grid=(132,), block=128)
def walk(A: Tensor["M", "N", "fp32"], C: Tensor["M", "N", "fp32"]):
    for i, m in schedule(M // 64):
        nj = m % 3 + 1
        g0 = walked(nj)
        for j in range(nj):
            a = load(tile(A, (64, 64), (m, (g0 + j) % (N // 64))), layout="wgmma_acc_m64n64")
            store(tile(C, (64, 64), (m, (g0 + j) % (N // 64))), a)
'''


def test_the_running_sum_is_declared_before_the_tile_loop_and_read_before_it_grows():
    code = generate(parse_source(SRC, "walk.py")["walk"]).source
    decl = re.search(r"int (\w+_sum) = 0;", code)
    assert decl, code
    total = decl.group(1)
    loop = code.index("for (int tile")
    assert decl.start() < loop                       # once a block, before the tiles
    read = code.index(f"= {total};", loop)
    grow = code.index(f"{total} += ", loop)
    assert read < grow                               # this tile sees the earlier tiles' sum


def test_walked_prints_and_reads_back():
    kernel = parse_source(SRC, "walk.py")["walk"]
    text = format_kernel(kernel)
    assert "walked" in text
    assert format_kernel(read_kernel(text)) == text
