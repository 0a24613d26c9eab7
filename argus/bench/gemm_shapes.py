"""GEMM shapes drawn at random from the families an LLM runs, so that a benchmark result is
not tuned to one list: `draw(40, seed=7)` is the same 40 shapes on every machine.

- decode: M (tokens in flight) from 1 to 128, N x K a projection of a model below;
- prefill: M from 256 to 16384 (a prompt or a batch of them), the same projections;
- odd: M, N and K anywhere from 100 to 6000 with no alignment promised (about half of the
  N and K are not multiples of 8), the sizes a user's own layer has.

The projections of each model: the fused QKV (N = (heads + 2 kv_heads) * head_dim,
K = hidden), the attention output (N = hidden, K = heads * head_dim), the fused gate/up
(N = 2 * intermediate, K = hidden) and the down projection (N = hidden, K = intermediate),
from the models' published configurations. Families come in shuffled blocks of five (two
decode, two prefill, one odd), so every draw of five or more holds each of them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

# name: (hidden, intermediate, heads, kv_heads, head_dim)
MODELS = {
    "gpt2": (768, 3072, 12, 12, 64),
    "llama-3.2-1b": (2048, 8192, 32, 8, 64),
    "llama-3.2-3b": (3072, 8192, 24, 8, 128),
    "phi-3-mini": (3072, 8192, 32, 32, 96),
    "qwen2-7b": (3584, 18944, 28, 4, 128),
    "gemma-2-9b": (3584, 14336, 16, 8, 256),
    "llama-2-7b": (4096, 11008, 32, 32, 128),
    "llama-3-8b": (4096, 14336, 32, 8, 128),
    "llama-2-13b": (5120, 13824, 40, 40, 128),
    "qwen2.5-14b": (5120, 13824, 40, 8, 128),
    "llama-3-70b": (8192, 28672, 64, 8, 128),
}
PROJECTIONS = ("qkv", "o", "gate_up", "down")
FAMILIES = ("decode", "prefill", "odd")
BLOCK = ("decode", "decode", "prefill", "prefill", "odd")
DECODE_M = (1, 128)
PREFILL_M = (256, 16384)
ODD_SIZE = (100, 6000)


@dataclass(frozen=True)
class DrawnShape:
    m: int
    n: int
    k: int
    family: str
    source: str          # "llama-3-8b down", "odd"

    def text(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"


def projection(model: str, which: str) -> tuple[int, int]:
    """(N, K) of one projection of a model."""
    hidden, inter, heads, kv, hd = MODELS[model]
    return {"qkv": ((heads + 2 * kv) * hd, hidden), "o": (hidden, heads * hd),
            "gate_up": (2 * inter, hidden), "down": (hidden, inter)}[which]


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high))))))


def _rows(rng: random.Random, family: str) -> int:
    low, high = DECODE_M if family == "decode" else PREFILL_M
    m = _log_uniform(rng, low, high)
    if family == "prefill" and rng.random() < 0.5:
        m = 1 << round(math.log2(m))          # batch x sequence is often a power of two
    return m


def draw_one(rng: random.Random, family: str) -> DrawnShape:
    if family == "odd":
        m, n, k = (rng.randint(*ODD_SIZE) for _ in range(3))
        if rng.random() < 0.5:            # sizes like 3000 x 5000: odd, but 16-byte rows
            n, k = (max(8, d - d % 8) for d in (n, k))
        return DrawnShape(m, n, k, family, "odd")
    model = rng.choice(sorted(MODELS))
    which = rng.choice(PROJECTIONS)
    n, k = projection(model, which)
    return DrawnShape(_rows(rng, family), n, k, family, f"{model} {which}")


def draw(count: int, seed: int = 0) -> list[DrawnShape]:
    """`count` shapes, a function of (count, seed) alone; a longer draw of the same seed
    starts with the shorter one."""
    if count < 0:
        raise ValueError(f"a draw of {count} shapes: give a count >= 0")
    rng = random.Random(f"argus-gemm-shapes:{seed}")
    shapes: list[DrawnShape] = []
    while len(shapes) < count:
        block = list(BLOCK)
        rng.shuffle(block)
        for family in block[:count - len(shapes)]:
            shapes.append(draw_one(rng, family))
    return shapes
