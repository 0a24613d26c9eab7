"""The tools that run the `argus` command in a child process: check, compile, run_interpret,
layout_show.

They touch a user's kernel file, so the command runs in a child with a timeout: code under
optimisation never runs inside the planner's process (and cannot reach its timers, oracle
or memory). Each returns a dict with "tool" and "ok" and the command's output as text
(tools.py lists them with the others; the coder step calls check and compile directly).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TOOL_TIMEOUT_S = 300.0
MAX_OUTPUT = 20000


def _argus(args: list[str], timeout_s: float = TOOL_TIMEOUT_S) -> dict[str, Any]:
    try:
        proc = subprocess.run([sys.executable, "-m", "argus.cli.main", *args],
                              capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"ok": False, "exit_code": None, "stdout": "", "stderr": "",
                "error": f"argus {args[0]} did not finish within {timeout_s:g} s"}
    return {"ok": proc.returncode == 0, "exit_code": proc.returncode,
            "stdout": proc.stdout[-MAX_OUTPUT:], "stderr": proc.stderr[-MAX_OUTPUT:],
            "stdout_head": proc.stdout[:2000]}      # e.g. the resource line of --emit sass


def check(target: str) -> dict[str, Any]:
    """`argus check FILE.py[::KERNEL] --json`: parse, IR and barrier checks (see its docs)."""
    out = _argus(["check", "--json", "--", target])   # `--`: a target may begin with '-'
    try:
        # exit 1 (an error finding) still prints the full JSON result
        out["result"] = json.loads(out["stdout"]) if out["exit_code"] in (0, 1) else None
    except json.JSONDecodeError:
        out["result"] = None
    return {"tool": "check", "target": target, **out}


def compile_kernel(target: str, emit: str = "ir", locs: bool = False) -> dict[str, Any]:
    """`argus compile FILE.py::KERNEL --emit STAGE`: the kernel after one compiler stage."""
    args = ["compile", "--emit", emit] + (["--locs"] if locs else []) + ["--", target]
    return {"tool": "compile", "target": target, "emit": emit, **_argus(args)}


def run_interpret(target: str, shape: str = "", seed: int = 0) -> dict[str, Any]:
    """`argus run FILE.py::KERNEL --interpret`: the CPU interpreter against the reference."""
    args = ["run", "--interpret", "--seed", str(int(seed))]
    if shape:
        args += ["--shape", shape]
    args += ["--", target]
    out = _argus(args)
    out["passed"] = out["ok"] and "PASS" in out["stdout"]
    return {"tool": "run_interpret", "target": target, **out}


def layout_show(layout: str, output: str = "", thread: int | None = None) -> dict[str, Any]:
    """`argus layout show LAYOUT -o FILE.svg`: draw a layout or a Hopper atom."""
    path = output or str(Path(tempfile.mkdtemp(prefix="argus-layout-")) / "layout.svg")
    args = ["layout", "show", "-o", path] + (["--thread", str(thread)] if thread is not None
                                             else []) + ["--", layout]
    out = _argus(args)
    drawn = Path(path)
    out["path"] = path if out["ok"] else None
    out["bytes"] = drawn.stat().st_size if out["ok"] and drawn.exists() else 0
    return {"tool": "layout_show", "layout": layout, **out}
