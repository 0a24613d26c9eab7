"""`argus check FILE.py[::KERNEL] [--json] [--draw OUT.svg]`: verify kernels.

Runs the verifier (argus.verify.driver) on each kernel after parsing and IR checks: the
tag pass (data-flow invariants: which element, k slice and stage meets which at every
wgmma, stores, tag_assert), the protocol pass and the resource pass. Each finding names
the user's file:line, the op, a counterexample (block, warpgroup/warp/lane, register,
iteration, sizes, elements with actual and expected tags) and a one-line hint.

Verdict per kernel: "verified" (everything proved), "failed" (an error), or "unverified"
(no error, but a pass could not decide or does not model something, crashed, is not
installed, or a counterexample did not replay: the warnings say what is not proved).
Exit status: 0 verified, 1 failed, 2 usage or DSL error, 3 unverified (0 with
--accept-unverified, which still prints the verdict unverified). Each kernel is checked
within a wall-clock bound (`--deadline SECONDS`, default 60, ARGUS_VERIFY_DEADLINE; 0:
none): past it the verdict is unverified (a `verify.deadline` warning), never a hang. `--json`
prints the schema of docs/design/verifier.md ("argus.check/1"). `--draw` draws the
first error whose counterexample names a register of a fragment: the fragment's thread-
value tile with the offending thread and element outlined.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from argus.cli.compile_cmd import load_kernels, split_target
from argus.cli.errors import UsageError

SCHEMA = "argus.check/1"
EXIT_VERIFIED, EXIT_FAILED, EXIT_USAGE, EXIT_UNVERIFIED = 0, 1, 2, 3


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="verify kernels: tags, GEMM invariants, protocol, resources",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="FILE.py[::KERNEL]",
                        help="a file (every kernel in it) or one kernel")
    parser.add_argument("--json", action="store_true",
                        help="print the result as JSON (schema argus.check/1)")
    parser.add_argument("--draw", metavar="OUT.svg",
                        help="draw the first counterexample's thread on its tile (.svg/.png)")
    parser.add_argument("--deadline", metavar="SECONDS",
                        help="wall-clock bound on checking each kernel (default "
                             "ARGUS_VERIFY_DEADLINE, else 60; 0: none); past it the kernel is "
                             "unverified, with what the finished passes found")
    parser.add_argument("--accept-unverified", action="store_true",
                        help="exit 0 when the verdict is unverified (no error, but not "
                             "everything proved); the verdict printed stays unverified")
    parser.set_defaults(run=run_check)


def run_check(args) -> int:
    from argus.verify import deadline
    from argus.verify.driver import run
    from argus.verify.forked import jobs

    try:
        seconds = deadline.parse(args.deadline, "--deadline") \
            if getattr(args, "deadline", None) is not None else deadline.from_env()
    except ValueError as err:
        raise UsageError(str(err)) from None
    path, name = split_target(args.target, need_kernel=False)
    if args.draw and Path(args.draw).suffix.lower() not in (".svg", ".png"):
        raise UsageError(f"--draw {args.draw}: unknown suffix; write OUT.svg or OUT.png")
    kernels = load_kernels(path)
    if name is not None:
        if name not in kernels:
            known = ", ".join(kernels) or "none (no function decorated with @kernel)"
            raise UsageError(f"{path}:1: no kernel named '{name}'; kernels defined there: "
                             f"{known}")
        kernels = {name: kernels[name]}
    if not kernels:
        raise UsageError(f"{path}: no function decorated with @kernel; nothing to check")
    reports = [run(k, jobs(), seconds) for k in kernels.values()]
    accept = bool(getattr(args, "accept_unverified", False))
    if args.json:
        print(json.dumps(to_json(path, reports, accept), indent=2))
    else:
        for r in reports:
            print_report(path, r, accept)
    if args.draw:
        drawn = draw_first(reports, args.draw)
        if drawn:
            print(f"drew {drawn}", file=__import__("sys").stderr)
        else:
            print(f"--draw: no finding names a register of a fragment; nothing drawn",
                  file=__import__("sys").stderr)
    return exit_status(overall(reports), accept)


def overall(reports) -> str:
    """The file's verdict: failed if a kernel failed, else unverified if one is."""
    from argus.verify.driver import FAILED, UNVERIFIED, VERIFIED

    verdicts = {r.verdict for r in reports}
    return FAILED if FAILED in verdicts else UNVERIFIED if UNVERIFIED in verdicts else VERIFIED


def exit_status(verdict: str, accept_unverified: bool = False) -> int:
    if verdict == "failed":
        return EXIT_FAILED
    if verdict == "unverified":
        return EXIT_VERIFIED if accept_unverified else EXIT_UNVERIFIED
    return EXIT_VERIFIED


def to_json(path, reports, accept_unverified: bool = False) -> dict:
    return {
        "schema": SCHEMA,
        "file": str(path),
        "ok": all(r.ok for r in reports),        # true only when every kernel is verified
        "verdict": overall(reports),
        "accepted_unverified": accept_unverified and overall(reports) == "unverified",
        "kernels": [{
            "name": r.kernel,
            "ok": r.ok,
            "verdict": r.verdict,
            "unverified_reasons": r.unverified_reasons if r.verdict == "unverified" else [],
            "passes": r.passes,
            "missing_passes": r.missing,
            "seconds": round(r.seconds, 3),
            "errors": sum(f.severity == "error" for f in r.findings),
            "warnings": sum(f.severity == "warning" for f in r.findings),
            "findings": [f.to_json() for f in r.findings],
        } for r in reports],
    }


def print_report(path, r, accept_unverified: bool = False) -> None:
    for f in r.findings:
        print(f"{f.loc}: {f.severity}: {f.message} [{f.check}]")
        cex = f.counterexample
        if cex is not None:
            for line in describe(cex):
                print(f"    {line}")
        print(f"    hint: {f.hint}")
    errors = sum(f.severity == "error" for f in r.findings)
    warnings = len(r.findings) - errors
    ran = ", ".join(r.passes)
    unproved = sum(f.unproved for f in r.findings)
    if r.verdict == "failed":
        state = "FAILED"
    elif r.verdict == "unverified":
        what = f"{unproved} finding(s) say what is not proved" if unproved else \
            "a pass did not run"
        state = f"UNVERIFIED ({what}" + ("; accepted with --accept-unverified)"
                                         if accept_unverified else ")")
    else:
        state = "verified" if not warnings else "verified, with advisory warnings"
    missing = f"; not run (not installed): {', '.join(r.missing)}" if r.missing else ""
    print(f"{path}::{r.kernel}: {state} ({ran}{missing}): {errors} error(s), {warnings} "
          f"warning(s) in {r.seconds:.2f} s")


def describe(cex) -> list[str]:
    """The counterexample in a few indented lines."""
    who = []
    if cex.block is not None:
        who.append("block " + ",".join(map(str, cex.block)))
    if cex.warpgroup is not None:
        who.append(f"warpgroup {cex.warpgroup}")
    if cex.thread is not None:
        who.append(f"thread {cex.thread} (warp {cex.warp}, lane {cex.lane})")
    if cex.register is not None:
        who.append(f"register {cex.register}")
    if cex.smem_byte is not None:
        who.append(f"shared byte {cex.smem_byte}")
    if cex.barrier is not None:
        who.append(f"barrier {cex.barrier}")
    lines = []
    if who:
        lines.append("at: " + ", ".join(who))
    if cex.iteration:
        lines.append("iteration: " + ", ".join(f"{k}={v}" for k, v in cex.iteration.items()))
    if cex.sizes:
        lines.append("sizes: " + ", ".join(f"{k}={v}" for k, v in cex.sizes.items()))
    for e in cex.elements:
        idx = ", ".join(map(str, e.index))
        lines.append(f"element {e.tensor}[{idx}]: actual {_fields(e.actual)}; expected "
                     f"{_fields(e.expected)}")
    return lines


def _fields(d) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}"


def draw_first(reports, out) -> str | None:
    """Draw the first error naming a fragment register; the path drawn, or None."""
    from argus.layout.draw import draw_tv
    from argus.layout.hopper import get_atom

    for r in reports:
        for f in r.findings:
            cex = f.counterexample
            if f.severity != "error" or cex is None or cex.layout is None or cex.cell is None:
                continue
            tv = get_atom(cex.layout)
            thread = cex.thread % tv.threads
            title = (f"{f.check} at {f.loc.file}:{f.loc.line}: thread {cex.thread} "
                     f"register {cex.register}")
            return str(draw_tv(tv, out, highlight_cells=[tuple(cex.cell)],
                               highlight_thread=thread, title=title))
    return None
