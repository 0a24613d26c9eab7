"""The mbarrier state machine of PTX: phases, pending arrivals, tx-count, parity waits.

State: an arrival count set by init, the number of completed phases (its low bit is the
current phase parity), the arrivals still pending in the current phase, and the
tx-count (bytes expected minus bytes landed). A phase completes when pending arrivals
and tx-count are both zero; the parity flips and the counts reset. `try_wait.parity(P)`
succeeds once the phase with parity P has completed, i.e. when the current parity != P
(so a fresh barrier already passes a wait on parity 1: "the phase before the first").

Each phase also gathers a vector clock from everything that released into it, and a
successful wait acquires the clock of the phase it observed, which is what orders a TMA
write before the consumer's reads in the race detector.
"""

from __future__ import annotations

from .clocks import VectorClock
from .errors import MbarrierError


class Mbarrier:
    def __init__(self, name: str, strict_tx: bool = True):
        self.name = name
        self.strict_tx = strict_tx
        self.count: int | None = None
        self.completed_phases = 0
        self.pending = 0
        self.tx_count = 0
        self._phase_clock = VectorClock()
        self._last_completed_clock = VectorClock()

    # -- state ------------------------------------------------------------------
    @property
    def initialized(self) -> bool:
        return self.count is not None

    @property
    def phase_parity(self) -> int:
        return self.completed_phases & 1

    def __repr__(self) -> str:
        if not self.initialized:
            return f"Mbarrier({self.name!r}, uninitialised)"
        return (f"Mbarrier({self.name!r}, phase={self.completed_phases} parity={self.phase_parity}, "
                f"pending={self.pending}/{self.count}, tx={self.tx_count})")

    def _require_init(self, what: str) -> None:
        if not self.initialized:
            raise MbarrierError(
                f"{what} on mbarrier {self.name!r} before mbarrier.init; initialise it "
                f"(one thread, then fence.mbarrier_init / a barrier) before any use")

    # -- operations ---------------------------------------------------------------
    def init(self, count: int) -> None:
        if self.initialized:
            raise MbarrierError(
                f"mbarrier {self.name!r} initialised twice; call inval() before re-initialising")
        if not isinstance(count, int) or not 1 <= count <= (1 << 20) - 1:
            raise MbarrierError(
                f"mbarrier {self.name!r}: arrival count {count!r} must be an int in [1, 2^20-1]")
        self.count = count
        self.pending = count
        self.tx_count = 0

    def inval(self) -> None:
        self.count = None

    def arrive(self, count: int = 1, expect_tx: int = 0, clock: VectorClock | None = None) -> int:
        """Arrive `count` times, first adding `expect_tx` bytes; returns the phase arrived in."""
        self._require_init("arrive")
        if count < 1:
            raise MbarrierError(f"mbarrier {self.name!r}: arrive count must be >= 1, got {count}")
        if count > self.pending:
            raise MbarrierError(
                f"mbarrier {self.name!r}: {count} arrival(s) but only {self.pending} pending in "
                f"phase {self.completed_phases} (count {self.count}); more arrivals than the "
                f"init count: check the count passed to init and who arrives")
        phase = self.completed_phases
        if expect_tx:
            self.expect_tx(expect_tx, clock=clock)
        self.pending -= count
        if clock is not None:
            self._phase_clock.join(clock)
        self._maybe_complete()
        return phase

    def expect_tx(self, nbytes: int, clock: VectorClock | None = None) -> None:
        self._require_init("expect_tx")
        if nbytes < 0:
            raise MbarrierError(f"mbarrier {self.name!r}: expect_tx of {nbytes} bytes is negative")
        self.tx_count += nbytes
        if clock is not None:
            self._phase_clock.join(clock)

    def complete_tx(self, nbytes: int, clock: VectorClock | None = None) -> None:
        """Bytes landed by an asynchronous copy that signals this barrier."""
        self._require_init("complete_tx")
        if self.strict_tx and nbytes > self.tx_count:
            raise MbarrierError(
                f"mbarrier {self.name!r}: tx-count underflow, {nbytes} bytes landed but only "
                f"{self.tx_count} expected in phase {self.completed_phases}; arrive.expect_tx "
                f"the full box bytes (out-of-bounds fill counts too) before issuing the copy")
        self.tx_count -= nbytes
        if clock is not None:
            self._phase_clock.join(clock)
        self._maybe_complete()

    def _maybe_complete(self) -> None:
        if self.pending == 0 and self.tx_count == 0:
            self.completed_phases += 1
            self.pending = self.count
            self._last_completed_clock = self._phase_clock
            self._phase_clock = VectorClock()

    def test_wait_parity(self, parity: int) -> bool:
        """mbarrier.try_wait.parity: has the phase with this parity completed?"""
        self._require_init("try_wait.parity")
        if parity not in (0, 1):
            raise MbarrierError(f"mbarrier {self.name!r}: parity must be 0 or 1, got {parity!r}")
        return self.phase_parity != parity

    def acquired_clock(self) -> VectorClock:
        """The clock released into the most recently completed phase (what a waiter sees)."""
        return self._last_completed_clock
