"""The coder step: a model-written DSL kernel, checked in a child process, never executed here.

When the provider answers with a kernel (source text) instead of knob values, the planner
calls `check_candidate`: the source is written to the episode folder
(`<work_dir>/step-NNN/kernel.py`), and `argus check FILE --json` runs on it in a child
process (commands.check). The DSL frontend parses the file's syntax tree; the file is never
imported or executed, neither here nor in that child, so `import os` or `open(...)` in a
reply does nothing. The findings (with their counterexamples) or the DSL error become the
next prompt's feedback. Where a CUDA compiler exists (nvcc or NVRTC, no GPU needed) a clean
kernel is also built in a child (`argus compile FILE::KERNEL --emit sass`): a build error is
a compile_error, the ptxas resource line goes into the feedback. A clean kernel is scored:

- if it is a library-kernel specialisation (its @kernel function is one of
  argus/kernels/gemm*.py's with only the const defaults and module constants changed,
  `library_specialisation`), its knob configuration goes to the evaluator like any other
  (the cost model on a CPU; on a GPU the harness measures exactly that library kernel);
- otherwise the evaluator's `evaluate_kernel(path, task)` measures it (the GPU evaluator:
  the harness in a child process); an evaluator without it (the CPU one) says
  "unmeasured on CPU".
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argus.agent import commands
from argus.agent.evaluators.base import Outcome
from argus.agent.gemm_config import ConfigError, GemmConfig, parse_config
from argus.agent.kernel_source import (LIBRARY_DIR, const_value, kernel_functions, kernel_names,
                                       module_constants)
from argus.limits import SM_COUNT

MAX_KERNEL_CHARS = 16000
MAX_FINDINGS = 6
# library kernel function -> (file, epilogue knob unless the module's EPILOGUE says)
LIBRARY_KERNELS = {"gemm_nt": ("gemm.py", "direct"), "gemm_nn": ("gemm.py", "direct"),
                   "gemm_nt_splitk": ("gemm_splitk.py", "direct"),
                   "gemm_nn_splitk": ("gemm_splitk.py", "direct")}
_CONSTS = ("BM", "BN", "BK", "S", "GROUP", "SPLIT")


@dataclass
class CandidateCheck:
    path: str
    clean: bool                        # argus check found no error (and it built, if it could)
    outcome: Outcome | None            # set when the check failed (the step's outcome)
    library: tuple[str, GemmConfig] | None = None    # (kernel name, config) if a specialisation
    findings: list[dict[str, Any]] = field(default_factory=list)
    built: str = ""                    # the build's resource line, when a compiler was here


def have_compiler() -> bool:
    from argus.runtime.toolchain import find_tool, nvrtc_identity

    return find_tool("nvcc") is not None or nvrtc_identity() is not None


def build_candidate(path: Path, source: str, compiler=None) -> tuple[str, Outcome | None]:
    """`argus compile FILE::KERNEL --emit sass` in a child for each kernel of the file:
    (the resource lines, None) or ("", a compile_error outcome with the one-line reason)."""
    lines = []
    for name in kernel_names(source):
        out = (compiler or commands.compile_kernel)(f"{path}::{name}", "sass")
        if not out.get("ok"):
            why = (out.get("stderr") or out.get("error") or "the build failed").strip()
            why = why.replace(str(path), "kernel.py").removeprefix("argus: error: ")
            return "", Outcome("compile_error", source="compiler",
                               feedback=f"verified clean, but the build failed: {why}")
        first = (out.get("stdout_head") or out.get("stdout") or "").splitlines()[:1]
        lines += [f.removeprefix("// ") for f in first]
    return "; ".join(lines), None


def write_candidate(source: str, work_dir: Path, index: int,
                    limit: int | None = MAX_KERNEL_CHARS) -> Path:
    """Write `source` to <work_dir>/step-NNN/kernel.py, cut at `limit` characters (None: a
    caller that bounded the source itself, e.g. the kernel coder sized to its task)."""
    folder = Path(work_dir) / f"step-{index:03d}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kernel.py"
    path.write_text(source if limit is None else source[:limit], encoding="utf-8")
    return path


def format_findings(result: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The verifier's JSON (argus.check/1) as short text: each error, and each finding
    that leaves the kernel unverified ("not proved"), with its counterexample. A kernel is
    clean only when its verdict is "verified"."""
    lines, errors = [], []
    for k in result.get("kernels", []):
        for f in k.get("findings", []):
            if f.get("severity") != "error" and not f.get("unverified"):
                continue
            errors.append(f)
            if len(errors) > MAX_FINDINGS:
                continue
            loc = f.get("location") or {}
            kind = "error" if f.get("severity") == "error" else "not proved"
            lines.append(f"kernel.py:{loc.get('line', '?')}: {kind} [{f.get('check')}] "
                         f"{f.get('message')}")
            cex = f.get("counterexample") or {}
            who = [f"{key} {cex[key]}" for key in ("block", "warpgroup", "thread", "register",
                                                    "barrier") if cex.get(key) is not None]
            if who:
                lines.append("  at: " + ", ".join(who))
            if cex.get("iteration"):
                lines.append("  iteration: " + ", ".join(f"{a}={b}" for a, b in
                                                         cex["iteration"].items()))
            for e in (cex.get("elements") or [])[:2]:
                lines.append(f"  element {e.get('tensor')}{e.get('index')}: actual "
                             f"{e.get('actual')}; expected {e.get('expected')}")
            if f.get("hint"):
                lines.append(f"  hint: {f['hint']}")
    if len(errors) > MAX_FINDINGS:
        lines.append(f"... and {len(errors) - MAX_FINDINGS} more errors")
    return "\n".join(lines), errors


def check_candidate(source: str, work_dir: Path, index: int, checker=None,
                    compiler=None, dtype: str = "bfloat16",
                    limit: int | None = MAX_KERNEL_CHARS) -> CandidateCheck:
    """Write the kernel, `argus check` it in a child process, build it in another when a
    CUDA compiler is here (compile errors and ptxas resources), classify the result."""
    path = write_candidate(source, work_dir, index, limit)
    out = (checker or commands.check)(str(path))
    result = out.get("result")
    if out.get("exit_code") == 2 or result is None:        # DSL error: one line on stderr
        why = (out.get("stderr") or out.get("error") or "argus check failed").strip()
        why = why.replace(str(path), "kernel.py").removeprefix("argus: error: ")
        return CandidateCheck(str(path), False, Outcome(
            "compile_error", source="verifier",
            feedback=f"argus check rejected the kernel: {why}"))
    text, errors = format_findings(result)
    if errors or not result.get("ok", False):
        failed = sum(f.get("severity") == "error" for f in errors)
        said = (f"the verifier found {failed} error(s)" if failed or
                result.get("verdict") != "unverified" else
                f"the verifier could not prove the kernel (verdict unverified: "
                f"{len(errors) or 'a pass did not run'} check(s) not proved); it is not "
                f"accepted until it verifies")
        return CandidateCheck(str(path), False, Outcome(
            "invalid", source="verifier", violations=errors[:MAX_FINDINGS],
            feedback=f"{said}:\n{text}"), findings=errors)
    built = ""
    if compiler is not None or have_compiler():
        built, failed = build_candidate(path, source, compiler)
        if failed is not None:
            return CandidateCheck(str(path), False, failed)
    return CandidateCheck(str(path), True, None, library_specialisation(source, dtype),
                          built=built)


def _shape(fn: ast.FunctionDef, module: dict[str, Any] | None = None
           ) -> tuple[str, dict[str, Any]]:
    """The function without its const defaults (dumped), and those defaults."""
    fn = copy.deepcopy(fn)
    names = [a.arg for a in fn.args.args][-len(fn.args.defaults):] if fn.args.defaults else []
    consts = {}
    for name, default in zip(names, fn.args.defaults):
        try:
            consts[name] = const_value(default, module or {})
        except ValueError:
            return "", {}
    fn.args.defaults = []
    return ast.dump(fn, include_attributes=False), consts


def _helper_code(tree: ast.Module, fn: ast.FunctionDef) -> dict[str, str]:
    """The @helper functions `fn` calls, directly or through other helpers, dumped by name:
    they are inlined into the kernel, so a change in one is a change of the kernel."""
    helpers = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)
               and any(_decorator_name(d) == "helper" for d in node.decorator_list)}
    found: dict[str, str] = {}
    stack = [fn]
    while stack:
        for node in ast.walk(stack.pop()):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in helpers and node.func.id not in found:
                found[node.func.id] = ast.dump(helpers[node.func.id], include_attributes=False)
                stack.append(helpers[node.func.id])
    return found


def _decorator_name(d: ast.expr) -> str | None:
    d = d.func if isinstance(d, ast.Call) else d
    return d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else None


DT_OF = {"bfloat16": "bf16", "float16": "fp16"}


def library_specialisation(source: str, dtype: str = "bfloat16") -> tuple[str, GemmConfig] | None:
    """(kernel name, knob config) when the source's kernel is a library GEMM kernel with only
    its const defaults and module constants changed (DT the task's `dtype`, BLOCKS the SM
    count, ACC matching BN); None otherwise. Parses, never executes."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    kernels = kernel_functions(tree)
    if len(kernels) != 1:
        return None
    name, fn = next(iter(kernels.items()))
    if name not in LIBRARY_KERNELS:
        return None
    file, epilogue = LIBRARY_KERNELS[name]
    lib_tree = ast.parse((LIBRARY_DIR / file).read_text())
    lib_fn = kernel_functions(lib_tree).get(name)
    module = {**module_constants(lib_tree), **module_constants(tree)}
    shape, consts = _shape(fn, module)
    lib_shape, lib_consts = _shape(lib_fn, module)
    if not shape or shape != lib_shape:
        return None
    if _helper_code(tree, fn) != _helper_code(lib_tree, lib_fn):     # inlined: kernel code
        return None
    values = {**lib_consts, **consts}
    epilogue = module.get("EPILOGUE", epilogue)
    consumers = module.get("WG", 2)
    if (consumers, tuple(module.get("CONSUMERS", (1, 2)))) not in ((2, (1, 2)), (1, (1,))):
        return None
    if (module.get("BLOCKS") != SM_COUNT or module.get("ACC") != f"wgmma_acc_m64n{values['BN']}"
            or module.get("DT") != DT_OF.get(dtype)):
        return None
    try:
        config = parse_config({"BM": values["BM"], "BN": values["BN"], "BK": values["BK"],
                               "stages": values["S"], "consumers": consumers,
                               "warp_specialized": True, "cluster_m": module.get("CM", 1),
                               "cluster_n": 1, "raster": "m",
                               "group": values.get("GROUP", 1), "persistent": True,
                               "split_k": values.get("SPLIT", 1), "epilogue": epilogue})
    except ConfigError:
        return None
    return name, config


def unmeasured(path: str, evaluator: str) -> Outcome:
    return Outcome("unmeasured", source=evaluator, details={"kernel": path},
                   feedback="verified clean (no error finding), but unmeasured on CPU: it is "
                            "not a library-kernel specialisation, so the cost model cannot "
                            "score it; a GPU evaluator would measure it through the harness")
