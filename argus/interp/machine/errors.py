"""Errors raised by the machine model when a kernel misuses the hardware.

Each message names the object involved and says how to fix the program; the scheduler
adds the agent and step at which the misuse happened.
"""


class MachineError(Exception):
    """A kernel did something the hardware does not allow (or leaves undefined)."""


class MbarrierError(MachineError):
    """An mbarrier was used against the PTX rules (uninitialised, over-arrived, tx underflow)."""


class AsyncOpError(MachineError):
    """An asynchronous operation was issued or retired wrongly (bad box, wait with no group)."""


class RegisterInFlightError(MachineError):
    """Registers were touched while a wgmma that reads or writes them is still in flight."""


class MemoryModelError(MachineError):
    """A shared-memory access fell outside its buffer or used the wrong element type."""


class SchedulerError(MachineError):
    """An agent yielded something that is not an instruction, or the machine was misused."""
