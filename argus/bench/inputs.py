"""Fresh, seeded random inputs for correctness checks.

Every check draws new inputs from its own seed, so a candidate must compute the same
function on any valid input; never zeros (they hide unwritten outputs and wrong indexing
and can run faster than real data). Two distributions: unit normal, and a wide one with
larger magnitude and a non-zero mean (catches kernels tuned to small values and
cancellation-free data).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

DISTRIBUTIONS = ("normal", "wide")


@dataclass
class Sampler:
    """Draws tensors from one distribution with one seeded generator.

    On a CPU device the draw is in float64 on the CPU. On a CUDA device it is in float32
    with a seeded CUDA generator on the device itself: drawing 8192 x 8192 inputs in
    float64 on the host took ~20 s of every harness case on the H200 machine (28 ns per
    element, six input sets per case), the device draws them in milliseconds. Either way a
    check is reproducible from its seed on the same kind of device; the two kinds draw
    different values from one seed.
    """

    seed: int
    distribution: str = "normal"
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(
                f"unknown input distribution {self.distribution!r}; use one of {DISTRIBUTIONS}")
        self.on_device = torch.device(self.device).type == "cuda"
        self.generator = torch.Generator(device="cuda" if self.on_device else "cpu")
        self.generator.manual_seed(int(self.seed))
        self._draw_dtype = torch.float32 if self.on_device else torch.float64
        self._draw_device = self.device if self.on_device else "cpu"

    def floats(self, shape, dtype: torch.dtype, magnitude: float = 1.0) -> torch.Tensor:
        """A float tensor of `shape` and `dtype`: N(0,1), or for "wide" 8*N(0,1)+2 with
        a per-row log-uniform scale in [1/8, 8] (magnitudes up to a few hundred), times
        `magnitude` (a problem lowers it where its dtype would overflow)."""
        base = torch.randn(tuple(shape), generator=self.generator, dtype=self._draw_dtype,
                           device=self._draw_device)
        if self.distribution == "wide":
            rows = shape[0] if len(shape) > 0 else 1
            log_scale = torch.empty(rows, dtype=self._draw_dtype, device=self._draw_device
                                    ).uniform_(-3.0, 3.0, generator=self.generator)
            scale = torch.exp2(log_scale).reshape((rows,) + (1,) * (len(shape) - 1))
            base = (8.0 * base + 2.0) * (scale if len(shape) > 0 else scale.reshape(()))
            base = base * float(magnitude)
        return base.to(dtype).to(self.device)

    def integers(self, low: int, high: int, shape, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        """Uniform integers in [low, high), e.g. indices or expert ids."""
        t = torch.randint(low, high, tuple(shape), generator=self.generator, dtype=torch.int64,
                          device=self._draw_device)
        return t.to(dtype).to(self.device)


def check_seed(base_seed: int, check_index: int) -> int:
    """The seed of one check: distinct per check, stable for a given base seed."""
    return (int(base_seed) * 1_000_003 + 7919 * (check_index + 1)) % (2 ** 63 - 1)
