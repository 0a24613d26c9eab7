"""Element types as the machine stores them: a storage NumPy dtype plus fp32 codecs.

Shared memory and global tensors hold the raw codes (bf16 as uint16, e4m3 as uint8), so
byte counts are the hardware's; wgmma decodes operands to fp32 and accumulates in fp32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import rounding


@dataclass(frozen=True)
class ElementType:
    name: str
    storage: np.dtype
    encode: Callable[[np.ndarray], np.ndarray]
    decode: Callable[[np.ndarray], np.ndarray]

    @property
    def itemsize(self) -> int:
        return self.storage.itemsize


def _plain(np_dtype):
    return (lambda v: np.asarray(v).astype(np_dtype), lambda c: np.asarray(c).astype(np.float32))


BF16 = ElementType("bf16", np.dtype(np.uint16), rounding.bf16_bits, rounding.bf16_to_f32)
FP16 = ElementType("fp16", np.dtype(np.uint16), rounding.fp16_bits, rounding.fp16_to_f32)
E4M3 = ElementType("e4m3", np.dtype(np.uint8), rounding.e4m3_bits, rounding.e4m3_to_f32)
FP32 = ElementType("fp32", np.dtype(np.float32), *_plain(np.float32))
INT32 = ElementType("int32", np.dtype(np.int32), lambda v: np.asarray(v).astype(np.int32),
                    lambda c: np.asarray(c).astype(np.int32))

BY_NAME = {t.name: t for t in (BF16, FP16, E4M3, FP32, INT32)}


def element_type(name_or_type) -> ElementType:
    """Look up an element type by name ('bf16', 'fp16', 'e4m3', 'fp32', 'int32')."""
    if isinstance(name_or_type, ElementType):
        return name_or_type
    try:
        return BY_NAME[name_or_type]
    except KeyError:
        raise ValueError(
            f"unknown element type {name_or_type!r}; use one of {sorted(BY_NAME)}") from None
