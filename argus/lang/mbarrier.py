"""mbarriers (shared-memory barriers with a phase and a transaction count)."""

from ._stub import surface


@surface
def mbarrier(count):
    """An array of `count` mbarriers (one per stage); `bars[s]` picks one."""


@surface
def mbarrier_init(bar, arrivals):
    """Initialise with the number of arrivals that completes a phase."""


@surface
def arrive(bar, cta=None):
    """Arrive on bar; with cta=r, on the same barrier in block r of the cluster."""


@surface
def expect_tx(bar, bytes):
    """Arrive and expect `bytes` transaction bytes (TMA completes them)."""


@surface
def wait(bar, phase):
    """Wait until the barrier's phase of parity `phase` (0 or 1) has completed."""
