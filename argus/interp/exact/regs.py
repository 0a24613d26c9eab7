"""The exact-mode value of a fragment-typed SSA value: registers per (thread, register)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fraglayout import FragLayout


@dataclass
class Regs:
    """data[t, v] is register v of thread t, laid out by `layout`."""

    layout: FragLayout
    data: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.layout.shape)

    def logical(self) -> np.ndarray:
        return self.layout.to_logical(self.data)

    def read(self) -> np.ndarray:
        return self.data
