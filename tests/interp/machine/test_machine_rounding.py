"""bf16 / fp16 / fp8-e4m3 round-to-nearest-even from fp32, on known values and vs ml_dtypes."""

import numpy as np
import pytest

from argus.interp.machine import bf16_bits, e4m3_bits, round_to_bf16, round_to_e4m3, round_to_fp16


def test_bf16_known_codes_and_ties_to_even():
    one = 1.0
    ulp = 2.0 ** -7
    vals = np.array([one, -2.0, one + ulp / 2, one + 3 * ulp / 2, one + ulp / 2 + 2 ** -20,
                     3.140625, np.inf, 0.0, -0.0], dtype=np.float32)
    codes = bf16_bits(vals)
    assert [hex(c) for c in codes] == ["0x3f80", "0xc000", "0x3f80", "0x3f82", "0x3f81",
                                       "0x4049", "0x7f80", "0x0", "0x8000"]
    assert np.isnan(round_to_bf16(np.float32("nan")))
    # largest finite fp32 rounds to bf16 infinity (just above bf16 max + ulp/2)
    assert np.isinf(round_to_bf16(np.float32(3.4028235e38)))


def test_e4m3_known_values():
    x = np.array([448, 500, 1e6, -1e6, 2 ** -9, 2 ** -10, 3 * 2 ** -10, 17, 19, 0.1, -3.3],
                 dtype=np.float32)
    got = round_to_e4m3(x)
    want = [448, 448, 448, -448, 2 ** -9, 0, 2 ** -8, 16, 20, 0.1015625, -3.25]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))
    assert e4m3_bits(np.float32(1.0)) == 0x38
    assert e4m3_bits(np.float32(np.inf)) == 0x7E               # satfinite clamps infinity
    assert np.isnan(round_to_e4m3(np.float32(1e6), saturate=False))
    assert round_to_e4m3(np.float32(463.9), saturate=False) == 448


def test_fp16_ties_to_even():
    ulp = 2.0 ** -10
    got = round_to_fp16(np.array([1 + ulp / 2, 1 + 3 * ulp / 2, 70000.0], dtype=np.float32))
    np.testing.assert_array_equal(got[:2], np.array([1.0, 1 + 2 * ulp], dtype=np.float32))
    assert np.isinf(got[2])


ml_dtypes = pytest.importorskip("ml_dtypes")


def _probe_values():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(20000).astype(np.float32) * rng.choice([1e-3, 1.0, 30.0, 300.0], 20000)
    # every bf16 and e4m3 midpoint, where rounding ties matter
    mids = (np.arange(0, 2 ** 15, 7, dtype=np.uint32) << 16) | 0x8000
    return np.concatenate([x, -x, mids.view(np.float32)[np.isfinite(mids.view(np.float32))]])


def test_bf16_matches_ml_dtypes():
    x = _probe_values()
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(round_to_bf16(x), want)


def test_e4m3_matches_ml_dtypes_in_range():
    x = _probe_values()
    x = x[np.abs(x) < 464]
    want = x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(round_to_e4m3(x, saturate=False), want)
    all_codes = np.arange(256, dtype=np.uint8)
    table = all_codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    from argus.interp.machine.rounding import E4M3_TABLE
    np.testing.assert_array_equal(np.isnan(E4M3_TABLE), np.isnan(table))
    finite = ~np.isnan(table)
    np.testing.assert_array_equal(E4M3_TABLE[finite], table[finite])
