"""Where the CUDA tools are, and who they are.

The build and the SASS inspection need NVRTC (through cuda-python), nvcc, and cuobjdump or
nvdisasm. They can live on PATH, under $CUDA_HOME, or inside the nvidia-* wheels; this module
finds them once and names each compiler by its version, which goes into every cache key.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

ARGUS_HEADER_DIR = Path(__file__).resolve().parent.parent / "codegen" / "include"


def _cuda_roots() -> list[Path]:
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    found = [Path(r) for r in roots if r]
    found.append(Path("/usr/local/cuda"))
    try:
        import nvidia  # the namespace package of the nvidia-* wheels

        for base in getattr(nvidia, "__path__", []):
            found.extend(sorted(Path(base).glob("cu1*")))
            found.extend(sorted(Path(base).glob("cuda_*")))
    except ImportError:
        pass
    return [r for r in found if r.is_dir()]


def find_tool(name: str) -> str | None:
    """The path of CUDA tool `name` (nvcc, cuobjdump, nvdisasm), or None when absent."""
    on_path = shutil.which(name)
    if on_path:
        return on_path
    for root in _cuda_roots():
        candidate = root / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


@functools.lru_cache(maxsize=None)
def _cuda_include_dirs() -> tuple[str, ...]:
    dirs = []
    for root in _cuda_roots():
        inc = root / "include"
        if (inc / "cuda.h").is_file() and str(inc) not in dirs:
            dirs.append(str(inc))
    return tuple(dirs)


def cuda_include_dirs() -> list[str]:
    """Toolkit include folders (those holding cuda.h), for generated code that includes them."""
    return list(_cuda_include_dirs())


def load_nvrtc():
    """The cuda-python NVRTC module, under its 12.x/13.x name or the older one; None if absent."""
    try:
        from cuda.bindings import nvrtc  # cuda-python >= 12.6

        return nvrtc
    except ImportError:
        pass
    try:
        from cuda import nvrtc  # older cuda-python

        return nvrtc
    except ImportError:
        return None


@functools.lru_cache(maxsize=None)
def nvrtc_identity() -> str | None:
    """'nvrtc 13.0 (cuda-bindings 13.0.3)', or None when NVRTC cannot be loaded."""
    nvrtc = load_nvrtc()
    if nvrtc is None:
        return None
    try:
        result = nvrtc.nvrtcVersion()
    except Exception:  # the shared library is missing although the bindings import
        return None
    if int(result[0]) != 0:
        return None
    package = sys.modules.get(nvrtc.__name__.rsplit(".", 1)[0])
    bindings = getattr(package, "__version__", "unknown")
    return f"nvrtc {result[1]}.{result[2]} (cuda-python {bindings})"


@functools.lru_cache(maxsize=None)
def nvcc_identity(nvcc: str) -> str:
    """The release line of `nvcc --version`, e.g. 'nvcc: Cuda compilation tools, release 13.0, V13.0.88'."""
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    release = [line for line in lines if "release" in line]
    return "nvcc: " + (release[0] if release else " / ".join(lines[-2:]))
