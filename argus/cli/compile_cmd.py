"""`argus compile FILE.py::KERNEL --emit ir`: show a kernel after each compiler stage.

Only the IR stage exists today; cuda, ptx, cubin and sass are refused until the CUDA
backend is built, rather than pretending.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from argus.cli.errors import UsageError

EMIT_TARGETS = ("ir", "cuda", "ptx", "cubin", "sass")
BUILT_TARGETS = ("ir",)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compile", help="show a kernel's IR (later: CUDA, PTX, cubin, SASS)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="FILE.py::KERNEL", help="the kernel to compile")
    parser.add_argument("--emit", choices=EMIT_TARGETS, default="ir",
                        help="which stage to print (default: ir)")
    parser.add_argument("--locs", action="store_true",
                        help="annotate each IR op with its source file:line")
    parser.set_defaults(run=run_compile)


def run_compile(args) -> int:
    from argus.ir.printer import format_kernel

    if args.emit not in BUILT_TARGETS:
        raise UsageError(f"--emit {args.emit}: not available yet: the CUDA backend is not "
                         f"built; use --emit ir")
    kernel = load_kernel(args.target)
    print(format_kernel(kernel, locs=args.locs))
    return 0


def split_target(target: str, need_kernel: bool = True) -> tuple[Path, str | None]:
    """FILE.py::KERNEL -> (path, name); a missing file or missing ::KERNEL is a usage error."""
    path_text, sep, name = target.partition("::")
    if need_kernel and (not sep or not name):
        raise UsageError(f"'{target}' names no kernel; write FILE.py::KERNEL, "
                         f"e.g. examples/copy.py::copy")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text}; give the path of a Python file "
                         f"holding @kernel functions")
    return path, (name or None)


def load_kernels(path: Path) -> dict:
    """Every kernel of the file as checked IR; DSL and IR errors become usage errors."""
    from argus.frontend import DSLError, parse_file
    from argus.ir.check import IRError

    try:
        return parse_file(path)
    except DSLError as err:
        raise UsageError(err.format()) from None
    except IRError as err:
        raise UsageError(f"{path}: malformed IR: {err}") from None


def load_kernel(target: str):
    """The checked IR of FILE.py::KERNEL; an unknown name lists the kernels the file has."""
    path, name = split_target(target)
    kernels = load_kernels(path)
    if name not in kernels:
        known = ", ".join(kernels) or "none (no function decorated with @kernel)"
        raise UsageError(f"{path}:1: no kernel named '{name}'; kernels defined there: {known}")
    return kernels[name]
