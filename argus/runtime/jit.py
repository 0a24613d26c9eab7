"""A DSL kernel called from Python like a Triton kernel: `copy(X, Y)`, `copy[grid](X, Y)`,
`gemm(A, B, C, BN=128)` on torch tensors (NumPy arrays too under the interpreter).

The first call of a (kernel, constants) pair parses the kernel's file with the constants
given as keywords (module constants and const parameters, as `argus run --const` takes
them), then builds it as the library ops are built (argus.runtime.modes: the GPU build, with
its cubin in the on-disk cache, or the interpreter's launcher under ARGUS_INTERPRET=1); later
calls reuse it. The shape symbols come from the tensors' shapes (arguments.py), the grid
from the kernel's declaration unless `kern[grid]` names one: ints, a tuple of up to three,
or a function of the shape symbols and constants returning them, e.g.
`kern[lambda meta: (meta["M"] // 64,)]`. The GPU launch goes on torch's current stream.
"""

from __future__ import annotations

import threading

from .launch_errors import LaunchError

_lock = threading.Lock()
_launchers: dict[tuple, object] = {}
_constants: dict[tuple, dict] = {}


def _parse(kernel_def, overrides: dict):
    from argus.frontend import parse_file

    kernels = parse_file(kernel_def.file, overrides or None)
    if kernel_def.name not in kernels:    # e.g. decorated inside a function: not in the file
        raise LaunchError(f"{kernel_def.file}: no module-level kernel named "
                          f"{kernel_def.name!r}; define kernels at the top level of a file")
    return kernels[kernel_def.name]


def kernel_constants(kernel_def) -> dict:
    """The constants of the kernel as declared (module constants, const parameters)."""
    key = (kernel_def.file, kernel_def.name)
    with _lock:
        if key not in _constants:
            _constants[key] = dict(_parse(kernel_def, {}).constants)
        return _constants[key]


def launcher_for(kernel_def, constants: dict):
    """The built kernel of `kernel_def` specialised with `constants` (cached per process)."""
    from .modes import debug_builds, interpret_mode, make_launcher

    mode, debug = interpret_mode(), debug_builds()
    key = (kernel_def.file, kernel_def.name, tuple(sorted(constants.items())), mode, debug)
    launcher = _launchers.get(key)
    if launcher is not None:
        return launcher
    if constants:
        known = kernel_constants(kernel_def)
        unknown = sorted(set(constants) - set(known))
        if unknown:
            raise LaunchError(f"kernel {kernel_def.name} has no constant "
                              f"{', '.join(map(repr, unknown))}; its constants are "
                              f"{', '.join(known) or 'none'}")
    ir = _parse(kernel_def, constants)
    with _lock:
        return _launchers.setdefault(key, make_launcher(ir, mode, debug))


def call_kernel(kernel_def, args, constants: dict, grid=None) -> None:
    """Run `kernel_def` on `args` (one array per tensor parameter, outputs written in place)."""
    launcher = launcher_for(kernel_def, constants)
    if callable(grid):
        _, sizes = launcher.bind(args)
        grid = grid({**launcher.ir.constants, **sizes})
    launcher(*args, grid=_grid_tuple(grid))


def _grid_tuple(grid):
    if grid is None:
        return None
    grid = (grid,) if isinstance(grid, int) else grid
    if not (isinstance(grid, tuple) and 1 <= len(grid) <= 3 and
            all(isinstance(g, int) and not isinstance(g, bool) and g > 0 for g in grid)):
        raise LaunchError(f"the grid must be a positive int or a tuple of 1 to 3 positive "
                          f"ints (or a function of the sizes returning one), got {grid!r}")
    return grid
