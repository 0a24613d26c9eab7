"""Register fragments with in-flight tracking.

A wgmma reads its register A operand and reads/writes its accumulator asynchronously,
until the wait_group that retires it. Touching those registers in between is undefined
on the GPU ("no accumulator access while an MMA is in flight"); here it raises.
"""

from __future__ import annotations

import numpy as np

from .errors import RegisterInFlightError


class RegisterFragment:
    """A warpgroup's registers holding a logical tile (fp32 accumulator or an operand)."""

    def __init__(self, name: str, values, layout=None):
        self.name = name
        self._values = np.array(values, dtype=np.float32)
        # exact mode: _values is the (thread, register) array of this thread-value layout
        # (argus.interp.exact.FragLayout); value mode: the logical tile, layout None
        self.layout = layout
        self.in_flight = 0  # wgmmas issued and not yet retired that use these registers
        self.owner: str | None = None  # agent whose wgmma.fence covers these registers
        self.needs_fence = True  # written by ordinary code since the owner's last wgmma.fence

    @classmethod
    def zeros(cls, name: str, shape) -> "RegisterFragment":
        return cls(name, np.zeros(shape, dtype=np.float32))

    @property
    def shape(self) -> tuple[int, ...]:
        """The logical tile's shape (in exact mode too)."""
        return tuple(self.layout.shape) if self.layout is not None else self._values.shape

    def logical(self) -> np.ndarray:
        """The logical tile (exact mode: gathered from the registers through the layout)."""
        regs = self.read()
        return self.layout.to_logical(regs) if self.layout is not None else regs

    def _check_idle(self, what: str) -> None:
        if self.in_flight:
            raise RegisterInFlightError(
                f"{what} of registers {self.name!r} while {self.in_flight} wgmma(s) using them "
                f"are in flight; wgmma.wait_group until they retire first")

    def read(self) -> np.ndarray:
        self._check_idle("read")
        return self._values.copy()

    def write(self, values) -> None:
        self._check_idle("write")
        values = np.asarray(values, dtype=np.float32)
        if values.shape != self._values.shape:
            raise RegisterInFlightError(
                f"write of shape {values.shape} into registers {self.name!r} of shape "
                f"{self._values.shape}")
        self._values[...] = values
        self.needs_fence = True

    # used by the wgmma when it lands (the async unit owns the registers then)
    def _async_values(self) -> np.ndarray:
        return self._values

    def _async_logical(self) -> np.ndarray:
        regs = self._values
        return self.layout.to_logical(regs) if self.layout is not None else regs
