"""A wgmma's k steps share their tile's descriptor: the generator writes step k's operand as
smem_descriptor_at(tile address, byte offset, fields) (argus_descriptor.cuh: the tile's
descriptor plus offset >> 4), the offsets those of descriptor_for, and the sum equals the
descriptor of address + offset for every shared address (the 14-bit start field cannot
carry below 2^18 bytes)."""

from __future__ import annotations

import re

import numpy as np

from argus.codegen import generate
from argus.frontend import parse_file
from argus.runtime.toolchain import ARGUS_HEADER_DIR

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_k_steps_of_a_gemm_tile_add_offsets_to_one_descriptor():
    kernel = parse_file(ROOT / "argus" / "kernels" / "gemm.py")["gemm_nt"]
    code = generate(kernel).source
    calls = re.findall(r"argus::smem_descriptor(_at)?\(([^;]*?), (0x[0-9a-f]+ull)\)", code)
    assert calls, code
    stepped = [c for c in calls if c[0]]
    assert stepped, "no k step past the first"
    for _, args, _ in stepped:
        base, offset = args.rsplit(", ", 1)
        assert int(offset) % 16 == 0 and int(offset) > 0
        # the same tile address as a first step's descriptor
        assert any(not c[0] and c[1] == base for c in calls), base


def test_the_offset_sum_is_the_descriptor_of_the_offset_address():
    rng = np.random.default_rng(5)
    addr = rng.integers(0, 2 ** 18 // 16, 20000) * 16
    off = rng.integers(0, 2 ** 14, 20000) * 16
    keep = addr + off < 2 ** 18
    addr, off = addr[keep], off[keep]
    assert np.array_equal(((addr & 0x3FFFF) >> 4) + (off >> 4), ((addr + off) & 0x3FFFF) >> 4)
    text = (ARGUS_HEADER_DIR / "argus_descriptor.cuh").read_text()
    assert "return smem_descriptor(smem_addr, fields) + (u64)(offset >> 4);" in text
