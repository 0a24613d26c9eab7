"""The hardware-dump comparisons themselves: they pass on a dump built from the PTX oracles
and fail on one wrong element (so a disagreeing H200 dump cannot slip through)."""

import copy

import pytest

from . import ptx_oracles as ptx
from . import test_hardware_dump as dump


def _oracle_dump():
    frag = {f"x{n}" + ("_trans" if tr else ""):
            [[list(ptx.ldmatrix_element(lane, v, tr)) for v in range(2 * n)] for lane in range(32)]
            for n in (1, 2, 4) for tr in (False, True)}
    tma = {}
    for swizzle, inner in (("128B", 64), ("64B", 32), ("32B", 16), ("none", 64)):
        slots = [None] * (inner * 8)
        for c1 in range(8):
            for c0 in range(inner):
                slots[ptx.swizzled_byte(2 * (c0 + inner * c1), swizzle) // 2] = [c0, c1]
        tma[swizzle] = {"dtype_bytes": 2, "box": [inner, 8], "smem": slots}
    return {
        "wgmma_accumulator": {str(n): [[list(ptx.wgmma_accumulator(t, v)) for v in range(n // 2)]
                                       for t in range(128)] for n in (8, 24)},
        "wgmma_a_register_16bit": [[list(ptx.wgmma_a_16bit(t, v)) for v in range(8)]
                                   for t in range(128)],
        "wgmma_a_register_8bit": [[list(ptx.wgmma_a_8bit(t, v)) for v in range(16)]
                                  for t in range(128)],
        "ldmatrix": frag, "stmatrix": copy.deepcopy(frag), "tma": tma,
    }


def _run_all(d):
    dump.test_dump_has_every_section(d)
    dump.test_accumulator_every_dumped_n(d)
    dump.test_register_a(d, "wgmma_a_register_16bit", 2)
    dump.test_register_a(d, "wgmma_a_register_8bit", 1)
    dump.test_matrix_fragments(d, "ldmatrix", dump.ldmatrix)
    dump.test_matrix_fragments(d, "stmatrix", dump.stmatrix)
    dump.test_tma_smem_images(d)


def test_an_oracle_dump_passes(oracle_dump):
    _run_all(oracle_dump)


def _corrupt_acc(d):
    d["wgmma_accumulator"]["24"][5][3] = [0, 0]


def _corrupt_a8(d):
    d["wgmma_a_register_8bit"][0][4] = [0, 4]


def _corrupt_ldmatrix(d):
    d["ldmatrix"]["x4_trans"][7][1] = [0, 0, 0]


def _corrupt_stmatrix(d):
    d["stmatrix"]["x2"][31][0] = [1, 7, 6]


def _corrupt_tma(d):
    s = d["tma"]["64B"]["smem"]
    s[1], s[2] = s[2], s[1]


def _drop_section(d):
    del d["stmatrix"]


@pytest.fixture(scope="module")
def oracle_dump():
    return _oracle_dump()


@pytest.mark.parametrize("corrupt,check", [
    (_corrupt_acc, dump.test_accumulator_every_dumped_n),
    (_corrupt_a8, lambda d: dump.test_register_a(d, "wgmma_a_register_8bit", 1)),
    (_corrupt_ldmatrix, lambda d: dump.test_matrix_fragments(d, "ldmatrix", dump.ldmatrix)),
    (_corrupt_stmatrix, lambda d: dump.test_matrix_fragments(d, "stmatrix", dump.stmatrix)),
    (_corrupt_tma, dump.test_tma_smem_images),
    (_drop_section, dump.test_dump_has_every_section),
])
def test_one_wrong_entry_fails(oracle_dump, corrupt, check):
    d = copy.deepcopy(oracle_dump)
    check(d)  # passes before the corruption
    corrupt(d)
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        check(d)
