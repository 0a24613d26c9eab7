"""The probe decoder recovers arbitrary layouts and refuses poisoned or ambiguous dumps.

Raw dumps here are made from random bijections (not from any real Hopper layout), so
a decoder that assumed the documented layouts instead of reading the dump would fail.
"""
import copy
import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import probe_to_json as p  # noqa: E402


def _shuffled(items, rng):
    items = list(items)
    rng.shuffle(items)
    return items


_FAKES = {}


def fake_raw(seed=0):
    """A fresh copy of a raw dump made from random (thread, v) <-> element maps."""
    if seed not in _FAKES:
        _FAKES[seed] = _make_fake_raw(seed)
    return copy.deepcopy(_FAKES[seed])


def _make_fake_raw(seed):
    """A raw dump as the probe would write it for random (thread, v) <-> element maps."""
    rng = random.Random(seed)
    truth = {"acc": {}, "lds": {}, "sts": {}, "tma": {}}
    raw = {"device": "fake", "cuda_driver_version": 0, "wgmma_ss_bf16": {}, "ldmatrix": {}, "stmatrix": {}, "tma": {}}
    for n in p.ACCUMULATOR_WIDTHS:
        cells = _shuffled([(r, c) for r in range(64) for c in range(n)], rng)
        table = [cells[t * (n // 2):(t + 1) * (n // 2)] for t in range(128)]
        truth["acc"][n] = table
        raw["wgmma_ss_bf16"][str(n)] = [[float(c + 256 * r) for r, c in row] for row in table]

    def through_acc(n, value_at):
        return [[float(value_at[cell]) for cell in row] for row in truth["acc"][n]]

    a16 = _shuffled([(r, k) for r in range(64) for k in range(16)], rng)
    truth["a16"] = [a16[t * 8:(t + 1) * 8] for t in range(128)]
    held = {cell: (t, v) for t, row in enumerate(truth["a16"]) for v, cell in enumerate(row)}
    raw["wgmma_rs_bf16"] = {
        "t_plus_1": through_acc(16, {c: tv[0] + 1 for c, tv in held.items()}),
        "v_plus_1": through_acc(16, {c: tv[1] + 1 for c, tv in held.items()}),
    }
    a8 = _shuffled([(r, k) for r in range(64) for k in range(32)], rng)
    truth["a8"] = [a8[t * 16:(t + 1) * 16] for t in range(128)]
    code = {cell: 16 * t + v for t, row in enumerate(truth["a8"]) for v, cell in enumerate(row)}
    raw["wgmma_rs_e4m3"] = [through_acc(32, {c: 1 + ((x >> 3 * d) & 7) for c, x in code.items()}) for d in range(4)]

    for name, num in p.LDMATRIX_COUNTS.items():
        slots = _shuffled([(m, r, c) for m in range(num) for r in range(8) for c in range(8)], rng)
        table = [slots[lane * 2 * num:(lane + 1) * 2 * num] for lane in range(32)]
        truth["lds"][name] = table
        enc = [1 + 64 * m + 8 * r + c for row in table for m, r, c in row]
        raw["ldmatrix"][name] = [[enc[2 * (lane * num + j)] | enc[2 * (lane * num + j) + 1] << 16
                                  for j in range(num)] for lane in range(32)]
        slots = _shuffled([(m, r, c) for m in range(num) for r in range(8) for c in range(8)], rng)
        table = [slots[lane * 2 * num:(lane + 1) * 2 * num] for lane in range(32)]
        truth["sts"][name] = table
        smem = [0] * 256
        for lane, row in enumerate(table):
            for v, (m, r, c) in enumerate(row):
                smem[64 * m + 8 * r + c] = 1 + 8 * lane + v
        raw["stmatrix"][name] = [smem]

    for name, inner in (("128B", 64), ("64B", 32), ("32B", 16), ("none", 64)):
        order = _shuffled([(c0, c1) for c1 in range(16) for c0 in range(inner)], rng)
        truth["tma"][name] = order
        raw["tma"][name] = {"box": [inner, 16], "barrier_completed": True,
                            "smem": [[1 + c0 + 256 * c1 for c0, c1 in order]]}
    return raw, truth


def test_decoder_recovers_random_layouts():
    raw, truth = fake_raw(seed=1)
    doc = p.decode(json.loads(json.dumps(raw)), {"device": "fake"})
    for n in p.ACCUMULATOR_WIDTHS:
        assert doc["wgmma_accumulator"][str(n)] == [[list(c) for c in row] for row in truth["acc"][n]]
    assert doc["wgmma_a_register_16bit"] == [[list(c) for c in row] for row in truth["a16"]]
    assert doc["wgmma_a_register_8bit"] == [[list(c) for c in row] for row in truth["a8"]]
    for name in p.LDMATRIX_COUNTS:
        assert doc["ldmatrix"][name] == [[list(s) for s in row] for row in truth["lds"][name]]
        assert doc["stmatrix"][name] == [[list(s) for s in row] for row in truth["sts"][name]]
    for name, order in truth["tma"].items():
        assert doc["tma"][name]["smem"] == [list(c) for c in order]
        assert doc["tma"][name]["dtype_bytes"] == 2


@pytest.mark.parametrize("poison", [p.GLOBAL_POISON_F32, p.REGISTER_POISON_F32])
def test_poisoned_accumulator_is_rejected(poison):
    raw, _ = fake_raw()
    raw["wgmma_ss_bf16"]["64"][5][3] = poison
    with pytest.raises(p.ProbeDecodeError, match="poison"):
        p.decode(raw, {})


def test_duplicated_accumulator_value_is_ambiguous():
    raw, _ = fake_raw()
    rows = raw["wgmma_ss_bf16"]["8"]
    rows[7][1] = rows[3][2]
    with pytest.raises(p.ProbeDecodeError, match="ambiguous"):
        p.decode(raw, {})


def test_inexact_accumulator_value_is_rejected():
    raw, _ = fake_raw()
    raw["wgmma_ss_bf16"]["8"][0][0] += 0.5
    with pytest.raises(p.ProbeDecodeError, match="exact integer"):
        p.decode(raw, {})


def test_a_register_run_out_of_range_is_rejected():
    raw, _ = fake_raw()
    raw["wgmma_rs_e4m3"][2][10][4] = 9.0
    with pytest.raises(p.ProbeDecodeError, match="not 1..8"):
        p.decode(raw, {})


def test_ldmatrix_poison_word_is_rejected():
    raw, _ = fake_raw()
    raw["ldmatrix"]["x4_trans"][31][3] = 0xFFFFFFFF
    with pytest.raises(p.ProbeDecodeError, match="poison"):
        p.decode(raw, {})


def test_stmatrix_write_outside_its_matrices_is_rejected():
    raw, _ = fake_raw()
    raw["stmatrix"]["x1"][0][64 * 2 + 5] = 7
    with pytest.raises(p.ProbeDecodeError, match="outside"):
        p.decode(raw, {})


def test_tma_unwritten_slot_and_lost_barrier_are_rejected():
    raw, _ = fake_raw()
    bad = copy.deepcopy(raw)
    bad["tma"]["128B"]["smem"][0][100] = 0
    with pytest.raises(p.ProbeDecodeError, match="still zero"):
        p.decode(bad, {})
    raw["tma"]["32B"]["barrier_completed"] = False
    with pytest.raises(p.ProbeDecodeError, match="mbarrier"):
        p.decode(raw, {})


def test_cli_refuses_to_write_a_bad_table(tmp_path):
    raw, _ = fake_raw()
    raw["wgmma_ss_bf16"]["256"][127][127] = p.GLOBAL_POISON_F32
    src, out = tmp_path / "raw.json", tmp_path / "out.json"
    src.write_text(json.dumps(raw))
    assert p.main([str(src), str(out)]) == 1
    assert not out.exists()
