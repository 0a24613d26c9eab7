"""One attention problem: O = softmax(scale Q K^T) V for (B, HQ, SQ, D) queries and
(B, HK, SK, D) keys and values, causal or not (bottom-right aligned), one dtype, one layout.

`parse_attention_shape` reads the command line's "B,HQ,HK,SQ,SK,D" (or the benchmark's
"BxHQxHKxSQxSKxD[c]"); every refusal is a TaskError saying what to change.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from argus.agent.task import TaskError

HEAD_DIMS = (64, 128)
DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16"}
LAYOUTS = ("bhsd", "bshd")
SYNTAX = "B,HQ,HK,SQ,SK,D (e.g. 4,16,16,4096,4096,128)"


@dataclass(frozen=True)
class AttentionTask:
    b: int
    hq: int
    hk: int
    sq: int
    sk: int
    d: int
    causal: bool = False
    dtype: str = "bf16"
    layout: str = "bhsd"
    op = "attention"

    def __post_init__(self) -> None:
        dims = (self.b, self.hq, self.hk, self.sq, self.sk, self.d)
        if any(not isinstance(x, int) or x < 1 for x in dims):
            raise TaskError(f"attention shape {dims}: every size must be a positive integer")
        if self.d not in HEAD_DIMS:
            raise TaskError(f"head dim D={self.d} is not supported; the kernel takes "
                            f"{' or '.join(map(str, HEAD_DIMS))}")
        if self.hq % self.hk:
            raise TaskError(f"the query heads HQ={self.hq} must be a multiple of the key/value "
                            f"heads HK={self.hk} (GQA/MQA)")
        if self.dtype not in ("bf16", "fp16"):
            raise TaskError(f"dtype {self.dtype!r} is not supported; use bf16 or fp16")
        if self.layout not in LAYOUTS:
            raise TaskError(f"layout {self.layout!r}: use one of {', '.join(LAYOUTS)}")
        if self.b * self.hq * self.sq >= 2 ** 31 or self.b * self.hk * self.sk >= 2 ** 31:
            raise TaskError("attention takes fewer than 2^31 rows of q and of k (B*H*S)")
        if self.layout == "bhsd" and self.b * self.hq > 65535:
            raise TaskError(f"B * HQ = {self.b * self.hq} is over the 65535 blocks of a grid axis")

    @property
    def group(self) -> int:
        return self.hq // self.hk

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.d)

    def kept_pairs(self) -> int:
        """(query, key) pairs the mask keeps per head (causal: bottom-right aligned)."""
        if not self.causal:
            return self.sq * self.sk
        off = self.sk - self.sq + 1
        return sum(max(0, min(self.sk, q + off)) for q in range(self.sq))

    @property
    def flops(self) -> float:
        """Two GEMMs over the kept pairs, FlashAttention's count."""
        return 4.0 * self.b * self.hq * self.d * self.kept_pairs()

    @property
    def shape_text(self) -> str:
        text = f"{self.b}x{self.hq}x{self.hk}x{self.sq}x{self.sk}x{self.d}"
        return text + ("c" if self.causal else "") + (
            f":{self.layout}" if self.layout != "bhsd" else "")

    def describe(self) -> dict:
        return {**asdict(self), "op": self.op, "flops": self.flops, "shape": self.shape_text}

    @classmethod
    def from_json(cls, data: dict) -> "AttentionTask":
        fields = ("b", "hq", "hk", "sq", "sk", "d", "causal", "dtype", "layout")
        return cls(**{k: data[k] for k in fields if k in data})


def parse_attention_shape(text: str, causal: bool = False, dtype: str = "bf16",
                          layout: str = "bhsd") -> AttentionTask:
    """`text` as B,HQ,HK,SQ,SK,D (commas or x; a trailing "c" means causal)."""
    raw = (text or "").strip()
    if raw.endswith("c"):
        causal, raw = True, raw[:-1]
    parts = raw.replace("x", ",").split(",")
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        dims = []
    if len(dims) != 6:
        raise TaskError(f"--shape {text!r} is not {SYNTAX}")
    if dtype not in DTYPES:
        raise TaskError(f"dtype {dtype!r} is not supported; use bf16 or fp16")
    return AttentionTask(*dims, causal=bool(causal), dtype=DTYPES[dtype], layout=layout)
