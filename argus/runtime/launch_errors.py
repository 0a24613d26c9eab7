"""Errors of a launch request: bad inputs, a GPU that cannot run the kernel, a driver error."""

from __future__ import annotations


class LaunchError(ValueError):
    """The inputs or the device do not fit the kernel; the message says what to change."""


class DriverError(RuntimeError):
    """The CUDA driver refused a call (the call and the driver's error name are given)."""


class KernelFailed(RuntimeError):
    """The kernel ran and went wrong: the interpreter found a deadlock, a hazard (race,
    out-of-bounds access, wrong barrier phase) or a broken `assume`; the message says which."""
