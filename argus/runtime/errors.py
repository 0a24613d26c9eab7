"""Compile failures, shown at the source: the compiler's log plus the lines it blames.

The C++ front end names source lines itself; ptxas names lines of the PTX, which are traced
back to the source through the PTX's .loc line info (through inlined_at when the bad
instruction sits in a header wrapper, so the caller's line is shown).
"""

from __future__ import annotations

import re
from pathlib import Path

SOURCE_NAME = "argus_kernel.cu"  # the file name the compilers see for a generated source


class BuildError(RuntimeError):
    """A compile failed; carries the compiler's log and the failing lines of the source."""

    def __init__(self, message: str, log: str = "", excerpt: str = "", compiler: str = ""):
        self.log = log
        self.excerpt = excerpt
        self.compiler = compiler
        parts = [message]
        if excerpt:
            parts.append("at:\n" + excerpt)
        if log:
            parts.append("compiler log:\n" + log.rstrip())
        super().__init__("\n".join(parts))


_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?P<what>(?:catastrophic )?error|warning)", re.M)


def source_excerpt(source: str, log: str, context: int = 2) -> str:
    """The source lines the log's errors point at, each with `context` lines around and a marker."""
    wanted = sorted({int(m["line"]) for m in _DIAGNOSTIC.finditer(log)
                     if Path(m["file"]).name == SOURCE_NAME and "error" in m["what"]})
    return excerpt_at(source, wanted, context)


PTXAS_ERROR = re.compile(r"^ptxas [^\n]*?, line (\d+); error", re.M)
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', re.M)
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+\d+)?")


def ptx_error_source_lines(ptx: str, log: str) -> list[int]:
    """The source lines behind ptxas's 'line N; error' (PTX lines), through the PTX's .loc info."""
    files = {int(n): Path(name).name for n, name in _PTX_FILE.findall(ptx)}
    ptx_lines = ptx.splitlines()
    found = []
    for number in sorted({int(n) for n in PTXAS_ERROR.findall(log)}):
        for text in reversed(ptx_lines[:number]):
            m = _PTX_LOC.match(text)
            if m is None:
                continue
            if files.get(int(m[1])) == SOURCE_NAME:
                found.append(int(m[2]))
            elif m[3] and files.get(int(m[3])) == SOURCE_NAME:
                found.append(int(m[4]))  # inside a header wrapper inlined at this source line
            break
    return sorted(set(found))


def excerpt_at(source: str, line_numbers, context: int = 2) -> str:
    """Each numbered line of `source` with `context` lines around it, marked with '>'."""
    lines = source.splitlines()
    blocks = []
    for n in list(line_numbers)[:5]:
        lo, hi = max(1, n - context), min(len(lines), n + context)
        blocks.append("\n".join(f"{'>' if i == n else ' '} {i:5d} | {lines[i - 1]}" for i in range(lo, hi + 1)))
    return "\n  ...\n".join(blocks)
