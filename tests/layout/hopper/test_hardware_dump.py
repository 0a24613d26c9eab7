"""Every atom against the layouts dumped from a real H200 (tests/layout/data/hopper_probe.json).

Skipped only when the dump is absent; every entry it holds is compared element by element.
"""

import json
from math import prod
from pathlib import Path

import pytest

from argus.layout.hopper import (TmaBox, ldmatrix, stmatrix, wgmma_a_registers,
                                 wgmma_accumulator)

PROBE = Path(__file__).resolve().parents[1] / "data" / "hopper_probe.json"
REQUIRED = ("wgmma_accumulator", "wgmma_a_register_16bit", "wgmma_a_register_8bit",
            "ldmatrix", "stmatrix", "tma")

pytestmark = pytest.mark.skipif(not PROBE.is_file(), reason=f"no hardware dump at {PROBE}")


@pytest.fixture(scope="module")
def probe():
    return json.loads(PROBE.read_text())


def _compare(atom, dumped, to_coord):
    """Assert atom.coord(t, v) == to_coord(dumped[t][v]) for every (t, v)."""
    assert len(dumped) == atom.threads, f"{atom.name}: {len(dumped)} threads in the dump"
    wrong = []
    for t, per_thread in enumerate(dumped):
        assert len(per_thread) == atom.values, f"{atom.name}: T{t} has {len(per_thread)} values"
        for v, entry in enumerate(per_thread):
            want = to_coord(entry)
            got = tuple(int(x) for x in atom.coord(t, v))
            if got != want:
                wrong.append((t, v, got, want))
    assert not wrong, (f"{atom.name}: {len(wrong)} elements differ from the hardware; first "
                       f"T{wrong[0][0]} V{wrong[0][1]}: here {wrong[0][2]}, H200 {wrong[0][3]}")


def test_dump_has_every_section(probe):
    missing = [s for s in REQUIRED if s not in probe]
    assert not missing, f"the hardware dump lacks {missing}"
    assert probe["wgmma_accumulator"], "no accumulator shapes in the dump"


def test_accumulator_every_dumped_n(probe):
    for key, dumped in probe.get("wgmma_accumulator", {}).items():
        _compare(wgmma_accumulator(int(key)), dumped, lambda e: (e[0], e[1]))


@pytest.mark.parametrize("section,element_bytes", [("wgmma_a_register_16bit", 2),
                                                   ("wgmma_a_register_8bit", 1)])
def test_register_a(probe, section, element_bytes):
    if section not in probe:
        pytest.fail(f"the hardware dump lacks {section}")
    _compare(wgmma_a_registers(element_bytes), probe[section], lambda e: (e[0], e[1]))


@pytest.mark.parametrize("section,build", [("ldmatrix", ldmatrix), ("stmatrix", stmatrix)])
def test_matrix_fragments(probe, section, build):
    entries = probe.get(section)
    if not entries:
        pytest.fail(f"the hardware dump lacks {section}")
    for key, dumped in entries.items():
        num, _, trans = key.partition("_")
        assert num in ("x1", "x2", "x4") and trans in ("", "trans"), f"unknown key {key!r}"
        atom = build(int(num[1:]), trans == "trans")
        _compare(atom, dumped, lambda e: (8 * e[0] + e[1], e[2]))


def test_tma_smem_images(probe):
    entries = probe.get("tma")
    if not entries:
        pytest.fail("the hardware dump lacks tma")
    for swizzle, entry in entries.items():
        eb, box_dims = entry["dtype_bytes"], tuple(entry["box"])
        dense_strides = tuple(eb * prod(box_dims[:d]) for d in range(len(box_dims)))
        box = TmaBox(eb, box_dims, dense_strides, box_dims, swizzle)
        image = box.smem_image()
        slots = entry["smem"]
        assert len(slots) == prod(box_dims), f"{swizzle}: {len(slots)} slots for the box"
        wrong = [(s, c) for s, c in enumerate(slots) if image(tuple(c)) != s * eb]
        assert not wrong, (f"TMA {swizzle}: {len(wrong)} slots differ; first: slot {wrong[0][0]} "
                           f"holds {wrong[0][1]} on the H200, the model puts it at byte "
                           f"{image(tuple(wrong[0][1]))}")
