"""CUDA C++ source -> cubin for sm_90a, through NVRTC (cuda-python) or nvcc, cached.

Always cubin, never PTX: a newer NVRTC's PTX is rejected by the H200's older driver, while a
cubin for sm_90a loads as it is. ptxas runs verbose so that every build carries its resource
report (registers, spills, shared memory, warnings) into the cache entry.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from argus.limits import MAX_REGISTERS_PER_THREAD
from argus.runtime import toolchain
from argus.runtime.errors import (
    SOURCE_NAME,
    PTXAS_ERROR,
    BuildError,
    excerpt_at,
    ptx_error_source_lines,
    source_excerpt,
)

COMPILERS = ("auto", "nvrtc", "nvcc")


@dataclass(frozen=True)
class BuildOptions:
    """Everything besides the source that changes the binary (so all of it is in the cache key)."""

    arch: str = "sm_90a"
    std: str = "c++17"
    defines: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[str, ...] = ()
    max_registers: int | None = None
    line_info: bool = True
    extra_flags: tuple[str, ...] = ()
    compiler: str = "auto"

    def __post_init__(self):
        if self.compiler not in COMPILERS:
            raise ValueError(f"compiler must be one of {COMPILERS}, got {self.compiler!r}")
        if not re.fullmatch(r"sm_\d+a?", self.arch):
            raise ValueError(f"arch must look like 'sm_90a', got {self.arch!r}")
        top = MAX_REGISTERS_PER_THREAD
        if self.max_registers is not None and not 16 <= self.max_registers <= top:
            raise ValueError(f"max_registers must be in [16, {top}], got {self.max_registers}")
        for item in self.defines:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise ValueError(f"defines must be (name, value) pairs, got {item!r}")

    def header_dirs(self) -> list[str]:
        """Argus's device headers first, then the caller's folders."""
        return [str(toolchain.ARGUS_HEADER_DIR), *self.include_dirs]

    def describe(self) -> dict:
        """A canonical, JSON-able form for the cache key."""
        return {
            "arch": self.arch,
            "std": self.std,
            "defines": sorted([list(d) for d in self.defines]),
            "include_dirs": list(self.include_dirs),
            "max_registers": self.max_registers,
            "line_info": self.line_info,
            "extra_flags": list(self.extra_flags),
        }


@dataclass
class CompiledBinary:
    """A fresh compile: the cubin, the full compiler log, and who compiled it."""

    cubin: bytes
    log: str
    compiler: str
    command: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Compiler:
    kind: str  # "nvrtc" or "nvcc"
    identity: str
    path: str | None = None


def select_compiler(options: BuildOptions) -> Compiler:
    """NVRTC when cuda-python loads (and was not ruled out), else nvcc; a clear error if neither."""
    if options.compiler in ("auto", "nvrtc"):
        ident = toolchain.nvrtc_identity()
        if ident is not None:  # NVRTC reads the toolkit's headers from these folders
            return Compiler("nvrtc", f"{ident}; toolkit headers {toolchain.cuda_include_dirs()}")
        if options.compiler == "nvrtc":
            raise BuildError("NVRTC was requested but cuda-python's nvrtc cannot be loaded: "
                             "pip install cuda-python (and nvidia-cuda-nvrtc), or use compiler='auto'")
    nvcc = toolchain.find_tool("nvcc")
    if nvcc is None:
        raise BuildError("no CUDA compiler found: install cuda-python (NVRTC) with "
                         "`pip install cuda-python`, or put nvcc on PATH / set CUDA_HOME")
    return Compiler("nvcc", toolchain.nvcc_identity(nvcc), nvcc)


def _gencode(arch: str) -> str:
    number = arch[len("sm_"):]
    return f"-gencode=arch=compute_{number},code=sm_{number}"


def nvcc_command(nvcc: str, options: BuildOptions, src: str, out: str) -> list[str]:
    cmd = [nvcc, "-cubin", f"-std={options.std}", _gencode(options.arch), "-Xptxas", "-v"]
    if options.line_info:
        cmd.append("-lineinfo")
    if options.max_registers is not None:
        cmd.append(f"-maxrregcount={options.max_registers}")
    cmd += [f"-I{d}" for d in options.header_dirs()]
    cmd += [f"-D{k}={v}" for k, v in options.defines]
    cmd += list(options.extra_flags)
    return cmd + ["-o", out, src]


def nvrtc_options(options: BuildOptions) -> list[str]:
    opts = [f"--gpu-architecture={options.arch}", f"--std={options.std}", "--ptxas-options=-v"]
    if options.line_info:
        opts.append("--generate-line-info")
    if options.max_registers is not None:
        opts.append(f"--maxrregcount={options.max_registers}")
    opts += [f"-I{d}" for d in options.header_dirs() + toolchain.cuda_include_dirs()]
    opts += [f"-D{k}={v}" for k, v in options.defines]
    return opts + list(options.extra_flags)


def _ptx_for_error(source: str, options: BuildOptions, compiler: Compiler) -> str:
    """The PTX of `source` (with line info), to map ptxas's errors back; '' if it cannot be made."""
    ptx_options = BuildOptions(**{**options.__dict__, "line_info": True})
    virtual = "compute_" + options.arch[len("sm_"):]
    try:
        if compiler.kind == "nvrtc":
            nvrtc = toolchain.load_nvrtc()
            (prog,) = _check(nvrtc, nvrtc.nvrtcCreateProgram(source.encode(), SOURCE_NAME.encode(), 0, [], []),
                             "program creation")
            try:
                opts = [o for o in nvrtc_options(ptx_options) if not o.startswith(("--gpu-architecture", "--ptxas"))]
                opts.append(f"--gpu-architecture={virtual}")
                if int(nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])[0]) != 0:
                    return ""
                (size,) = _check(nvrtc, nvrtc.nvrtcGetPTXSize(prog), "PTX size")
                buf = b" " * size
                _check(nvrtc, nvrtc.nvrtcGetPTX(prog, buf), "PTX read")
                return buf.rstrip(b"\0").decode(errors="replace")
            finally:
                nvrtc.nvrtcDestroyProgram(prog)
        with tempfile.TemporaryDirectory(prefix="argus-ptx-") as tmp:
            (Path(tmp) / SOURCE_NAME).write_text(source)
            cmd = nvcc_command(compiler.path, ptx_options, SOURCE_NAME, "kernel.ptx")
            cmd = [c for c in cmd if c not in ("-cubin", "-Xptxas", "-v") and not c.startswith("-gencode")]
            cmd[1:1] = ["-ptx", f"-arch={virtual}"]
            subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=600)
            out = Path(tmp) / "kernel.ptx"  # nvcc checks the PTX with ptxas, after writing it
            return out.read_text() if out.is_file() else ""
    except (BuildError, OSError, subprocess.SubprocessError):
        return ""


def failure(message: str, source: str, log: str, options: BuildOptions, compiler: Compiler) -> BuildError:
    """A BuildError showing the source lines at fault: from the C++ front end's diagnostics, or,
    for an assembler (ptxas) error, found through the PTX's line info."""
    excerpt = source_excerpt(source, log)
    if not excerpt and PTXAS_ERROR.search(log):
        lines = ptx_error_source_lines(_ptx_for_error(source, options, compiler), log)
        if lines:
            excerpt = "(ptxas error, traced through the PTX's line info)\n" + excerpt_at(source, lines)
    return BuildError(message, log, excerpt, compiler.identity)


def _check(nvrtc, result, what: str):
    err = result[0]
    if int(err) != 0:
        raise BuildError(f"NVRTC {what} failed: {err!r}")
    return result[1:]


def compile_with_nvrtc(source: str, options: BuildOptions, compiler: Compiler) -> CompiledBinary:
    identity = compiler.identity
    nvrtc = toolchain.load_nvrtc()
    (prog,) = _check(nvrtc, nvrtc.nvrtcCreateProgram(source.encode(), SOURCE_NAME.encode(), 0, [], []),
                     "program creation")
    opts = nvrtc_options(options)
    try:
        status = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])[0]
        (size,) = _check(nvrtc, nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        buf = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetProgramLog(prog, buf), "log read")
        log = buf.rstrip(b"\0").decode(errors="replace")
        if int(status) != 0:
            raise failure(f"NVRTC could not compile the kernel ({status!r})", source, log, options, compiler)
        (size,) = _check(nvrtc, nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
        if size == 0:
            raise BuildError(f"NVRTC produced no cubin for {options.arch} (is it a real sm_ target?)",
                             log, compiler=identity)
        cubin = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetCUBIN(prog, cubin), "cubin read")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return CompiledBinary(cubin, log, identity, ["nvrtc", *opts])


def compile_with_nvcc(source: str, options: BuildOptions, compiler: Compiler) -> CompiledBinary:
    nvcc, identity = compiler.path, compiler.identity
    with tempfile.TemporaryDirectory(prefix="argus-nvcc-") as tmp:
        src, out = Path(tmp) / SOURCE_NAME, Path(tmp) / "kernel.cubin"
        src.write_text(source)
        cmd = nvcc_command(nvcc, options, SOURCE_NAME, out.name)
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=600)
        log = (proc.stdout + proc.stderr).replace(tmp + "/", "")
        if proc.returncode != 0 or not out.is_file():
            raise failure(f"nvcc could not compile the kernel (exit {proc.returncode})", source, log, options,
                          compiler)
        return CompiledBinary(out.read_bytes(), log, identity, cmd)


def compile_cubin(source: str, options: BuildOptions = BuildOptions()) -> CompiledBinary:
    """Compile `source` to a cubin now, without the cache."""
    compiler = select_compiler(options)
    if compiler.kind == "nvrtc":
        return compile_with_nvrtc(source, options, compiler)
    return compile_with_nvcc(source, options, compiler)


def build_kernel(source: str, options: BuildOptions = BuildOptions(), cache=None):
    """The cached cubin of `source`, with its resource report: compiles only on a cache miss."""
    from argus.runtime.cache import KernelCache
    from argus.runtime.resources import parse_ptxas_report

    cache = cache if cache is not None else KernelCache()
    compiler = select_compiler(options)
    key = cache.key(source, options.describe(), compiler.identity, options.header_dirs())

    def make():
        binary = compile_cubin(source, options)
        report = parse_ptxas_report(binary.log)
        meta = {"compiler": binary.compiler, "options": options.describe(), "log": binary.log,
                "resources": report.to_json()}
        return binary.cubin, meta

    return cache.get_or_build(key, make)
