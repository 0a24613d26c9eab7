"""The folder the MCP tools may touch: every path a client gives (a kernel file to check,
compile or run, a drawing to write, a profile's kernel, an optimisation's output folder)
must resolve, symbolic links and `..` followed, inside it.

A client is a model, and a model's paths are untrusted like its kernels: without this,
`layout_show(output="/home/me/.bashrc.svg")` writes anywhere and `check("/etc/passwd")`
quotes a line of any file in its diagnostic. The workspace is `argus mcp --workspace DIR`,
else $ARGUS_WORKSPACE, else the server's working directory.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV = "ARGUS_WORKSPACE"


class OutsideWorkspace(ValueError):
    """A path outside the workspace; the message names both and says what to do."""


class Workspace:
    def __init__(self, root: str | Path | None = None):
        self.root = Path(root or os.environ.get(ENV) or Path.cwd()).resolve()

    def path(self, text: str, what: str) -> Path:
        """`text` (relative to the workspace, or absolute) as a path inside it."""
        if not text or "\x00" in text:
            raise OutsideWorkspace(f"{what}: give a path inside the workspace {self.root}")
        path = Path(text).expanduser()
        resolved = (path if path.is_absolute() else self.root / path).resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise OutsideWorkspace(
                f"{what} {text!r} is outside the workspace {self.root}; the argus MCP tools "
                f"read and write only there (start the server with `argus mcp --workspace "
                f"DIR` to choose another folder)")
        return resolved

    def target(self, target: str, what: str = "target") -> str:
        """FILE.py[::KERNEL] with FILE inside the workspace, as an absolute path."""
        file_text, sep, kernel = target.partition("::")
        return str(self.path(file_text, what)) + sep + kernel
