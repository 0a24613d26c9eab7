"""Round fp32 values to bf16, fp16 and fp8 e4m3, round-to-nearest-even, as the hardware does.

bf16 is done on the fp32 bit pattern (add 0x7FFF plus the lowest kept bit, truncate);
fp16 uses NumPy's float16 cast, which already rounds to nearest even; fp8 e4m3 (the
"fn" variant: no infinities, max 448, NaN = S.1111.111) is done against the table of its
127 non-negative finite values. Each `*_bits` function gives the storage code, each
`round_to_*` the rounded value back as fp32.
"""

from __future__ import annotations

import numpy as np

E4M3_MAX = 448.0
_E4M3_NAN_CODE = 0x7F


def _as_f32(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def bf16_bits(values) -> np.ndarray:
    """fp32 -> bf16 code (uint16), round to nearest even; NaN stays a quiet NaN."""
    x = _as_f32(values)
    bits = x.view(np.uint32).astype(np.uint64)
    keep_lsb = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + keep_lsb) >> 16) & 0xFFFF
    nan_code = ((bits >> 16) & 0x8000) | 0x7FC0
    return np.where(np.isnan(x), nan_code, rounded).astype(np.uint16)


def bf16_to_f32(codes) -> np.ndarray:
    """bf16 code (uint16) -> fp32 value (exact)."""
    c = np.asarray(codes, dtype=np.uint16).astype(np.uint32) << 16
    return c.view(np.float32)


def round_to_bf16(values) -> np.ndarray:
    return bf16_to_f32(bf16_bits(values))


def fp16_bits(values) -> np.ndarray:
    with np.errstate(over="ignore"):  # overflow to inf is the IEEE result we want
        return _as_f32(values).astype(np.float16).view(np.uint16)


def fp16_to_f32(codes) -> np.ndarray:
    return np.asarray(codes, dtype=np.uint16).view(np.float16).astype(np.float32)


def round_to_fp16(values) -> np.ndarray:
    return fp16_to_f32(fp16_bits(values))


def _e4m3_code_value(code: int) -> float:
    sign = -1.0 if code & 0x80 else 1.0
    exponent = (code >> 3) & 0xF
    mantissa = code & 0x7
    if exponent == 0xF and mantissa == 0x7:
        return float("nan")
    if exponent == 0:
        return sign * mantissa * 2.0 ** -9
    return sign * (1.0 + mantissa / 8.0) * 2.0 ** (exponent - 7)


E4M3_TABLE = np.array([_e4m3_code_value(c) for c in range(256)], dtype=np.float32)
_E4M3_POSITIVE = E4M3_TABLE[:0x7F]  # codes 0..126, strictly increasing, 0 .. 448


def e4m3_bits(values, saturate: bool = True) -> np.ndarray:
    """fp32 -> fp8 e4m3 code (uint8), round to nearest even.

    saturate=True is PTX `cvt.rn.satfinite.e4m3x2.f32`: overflow (and inf) clamps to
    +-448. saturate=False maps overflow past the rounding midpoint 464 to NaN, as the
    OCP/ml_dtypes conversion does.
    """
    x = _as_f32(values)
    mag = np.abs(x)
    hi = np.clip(np.searchsorted(_E4M3_POSITIVE, mag, side="left"), 0, 0x7E)
    lo = np.clip(hi - 1, 0, 0x7E)
    d_lo = mag - _E4M3_POSITIVE[lo]
    d_hi = _E4M3_POSITIVE[hi] - mag
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    code = np.where(pick_hi, hi, lo).astype(np.uint8)
    overflow = mag >= 464.0  # halfway to 480, which would be the next (even) code
    if saturate:
        code = np.where(overflow, np.uint8(0x7E), code)
    else:
        code = np.where(overflow, np.uint8(_E4M3_NAN_CODE), code)
    code = np.where(np.signbit(x), code | 0x80, code).astype(np.uint8)
    return np.where(np.isnan(x), np.uint8(_E4M3_NAN_CODE), code).astype(np.uint8)


def e4m3_to_f32(codes) -> np.ndarray:
    return E4M3_TABLE[np.asarray(codes, dtype=np.uint8)]


def round_to_e4m3(values, saturate: bool = True) -> np.ndarray:
    return e4m3_to_f32(e4m3_bits(values, saturate=saturate))
