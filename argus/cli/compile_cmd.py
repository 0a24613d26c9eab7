"""`argus compile FILE.py::KERNEL --emit ir|cuda|sass|cubin [-o FILE]`: a kernel after each
compiler stage: the IR, the generated CUDA C++ (sm_90a), the SASS of the built cubin (with
its ptxas resource report), or the cubin itself (written with -o). PTX is not kept: the
build goes straight to cubin (a newer NVRTC's PTX would not load on an older driver).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from argus.cli.errors import UsageError

EMIT_TARGETS = ("ir", "cuda", "sass", "cubin")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compile", help="show a kernel's IR, generated CUDA, SASS, or write its cubin",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="FILE.py::KERNEL", help="the kernel to compile")
    parser.add_argument("--emit", choices=EMIT_TARGETS, default="ir",
                        help="which stage to print (default: ir)")
    parser.add_argument("-o", "--output", default=None, help="write to this file (--emit cubin "
                        "needs it)")
    parser.add_argument("--locs", action="store_true",
                        help="annotate each IR op with its source file:line")
    parser.set_defaults(run=run_compile)


def run_compile(args) -> int:
    from argus.ir.printer import format_kernel

    if args.output:
        check_output_path(args.output)
    kernel = load_kernel(args.target)
    if args.emit == "ir":
        return _emit_text(format_kernel(kernel, locs=args.locs), args.output)
    from argus.codegen import CodegenError, generate

    try:
        gen = generate(kernel)
    except CodegenError as err:
        raise UsageError(str(err)) from None
    if args.emit == "cuda":
        return _emit_text(gen.source, args.output)
    from argus.runtime import BuildError, BuildOptions, build_kernel

    if args.emit == "cubin" and not args.output:
        raise UsageError("--emit cubin writes a binary: give -o FILE.cubin")
    try:
        entry = build_kernel(gen.source, BuildOptions())
    except BuildError as err:
        raise UsageError(f"the generated CUDA did not compile (a backend bug; please report "
                         f"it):\n{err}") from None
    if args.emit == "cubin":
        try:
            Path(args.output).write_bytes(entry.cubin)
        except OSError as err:
            raise UsageError(f"-o {args.output}: cannot write it: {err.strerror or err}") from None
        print(f"wrote {args.output} ({len(entry.cubin)} bytes, {entry.compiler})")
        return 0
    k = entry.resources.kernels.get(gen.name)
    head = (f"// {gen.name}: {k.registers} registers at entry, {k.spill_store_bytes} B spill "
            f"stores, {gen.smem_bytes} B dynamic shared memory\n") if k else ""
    return _emit_text(head + entry.sass().text, args.output)


def check_output_path(output: str) -> None:
    """-o names a file that can be written: not a directory, its folder existing."""
    path = Path(output)
    if path.is_dir():
        raise UsageError(f"-o {output} is a directory; give a file name, e.g. "
                         f"-o {path / 'kernel.cu'}")
    if not path.parent.is_dir():
        raise UsageError(f"-o {output}: no folder {path.parent}; create it first")


def _emit_text(text: str, output: str | None) -> int:
    if output:
        try:
            Path(output).write_text(text)
        except OSError as err:
            raise UsageError(f"-o {output}: cannot write it: {err.strerror or err}") from None
        print(f"wrote {output}")
    else:
        print(text, end="" if text.endswith("\n") else "\n")
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


def load_kernels(path: Path, overrides: dict | None = None) -> dict:
    """Every kernel of the file as checked IR (module constants and const parameters
    replaced by `overrides`); DSL and IR errors become usage errors."""
    from argus.frontend import DSLError, parse_file
    from argus.ir.check import IRError

    try:
        return parse_file(path, overrides=overrides or None)
    except DSLError as err:
        raise UsageError(err.format()) from None
    except IRError as err:
        raise UsageError(f"{path}: malformed IR: {err}") from None


def load_kernel(target: str, overrides: dict | None = None):
    """The checked IR of FILE.py::KERNEL; an unknown name lists the kernels the file has."""
    path, name = split_target(target)
    kernels = load_kernels(path, overrides)
    if name not in kernels:
        known = ", ".join(kernels) or "none (no function decorated with @kernel)"
        raise UsageError(f"{path}:1: no kernel named '{name}'; kernels defined there: {known}")
    return kernels[name]
