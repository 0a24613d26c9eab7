"""`argus demo`: the main job on any machine, GPU or not.

Checks every Hopper atom (its shape:stride layout) against the PTX ISA formula and the
hardware dump, draws each atom to OUT/<atom>.svg and prints one summary row per atom; then
takes the library's DSL GEMM through every stage this machine can run (interpreter,
generated CUDA, cubin; on an sm_90 GPU a run against cuBLAS: argus.cli.demo_gemm).
Exit status 1 when any check fails.
"""

from __future__ import annotations

import fnmatch
import platform
import time
from pathlib import Path

from argus.cli import atom_report
from argus.cli.errors import UsageError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo", help="check and draw every Hopper atom; report the GPU",
        description=__doc__)
    parser.add_argument("--out", default="out/layouts", metavar="DIR",
                        help="where the drawings go (default: out/layouts)")
    parser.add_argument("--no-draw", action="store_true", help="check only, draw nothing")
    parser.add_argument("--no-gemm", action="store_true", help="skip the DSL GEMM stages")
    parser.add_argument("--atom", action="append", metavar="PATTERN",
                        help="only the atoms matching PATTERN (shell-style, repeatable), "
                             "e.g. 'ldmatrix_*'")
    parser.set_defaults(run=run_demo)


def run_demo(args) -> int:
    from argus.layout.draw import draw_tv
    from argus.layout.hopper import atom_names, get_atom

    started = time.perf_counter()
    print(f"argus demo on Python {platform.python_version()}, {platform.machine()}")
    print(gpu_line())
    oracles_path = atom_report.checkout_file(atom_report.ORACLES_RELPATH)
    probe_path = atom_report.checkout_file(atom_report.PROBE_RELPATH)
    print(_source_line("PTX formulas", oracles_path, atom_report.ORACLES_RELPATH))
    print(_source_line("hardware dump", probe_path, atom_report.PROBE_RELPATH))
    oracles = atom_report.load_oracles(oracles_path)
    probe = atom_report.load_probe(probe_path)

    names = select_atoms(atom_names(), args.atom)
    out_dir = Path(args.out)
    rows = []
    for name in names:
        tv = get_atom(name)
        (bijective, formula, hardware), tabled = atom_report.check_atom(tv, oracles, probe)
        drawing = "-"
        if not args.no_draw and tabled is not None:
            drawing = str(draw_tv(tabled, out_dir / f"{_file_name(name)}.svg"))
        rows.append(atom_report.AtomRow(name, tuple(tv.tile), tv.threads, tv.values,
                                        bijective, formula, hardware, drawing))
    print()
    print(format_table(rows))
    failed = [row.name for row in rows if row.failed]
    elapsed = time.perf_counter() - started
    print()
    if failed:
        print(f"{len(failed)} of {len(rows)} atoms FAILED: {', '.join(failed)} ({elapsed:.1f} s)")
    else:
        print(f"all {len(rows)} atoms agree with every source found ({elapsed:.1f} s)")
    gemm_failed = 0
    if not args.no_gemm:
        from argus.cli.demo_gemm import run_gemm_demo
        gemm_failed = run_gemm_demo()
    return 1 if failed or gemm_failed else 0


def select_atoms(names, patterns) -> list[str]:
    """The names matching any pattern (all when none is given); a pattern matching none errs."""
    if not patterns:
        return list(names)
    unmatched = [p for p in patterns if not fnmatch.filter(names, p)]
    if unmatched:
        raise UsageError(f"no atom matches {', '.join(repr(p) for p in unmatched)}; "
                         "run `argus layout list` for the atom names")
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def _source_line(what: str, path, relpath) -> str:
    if path is None:
        return f"{what}: {relpath} not found here: those checks skipped"
    return f"{what}: {path}"


def gpu_line() -> str:
    """One line on the GPU: none, torch missing, or the device found."""
    try:
        import torch
    except ImportError:
        return "GPU: not checked (torch is not installed; pip install 'argus-kernels[gpu]')"
    if not torch.cuda.is_available():
        return "GPU: none found (CPU-only run)"
    name = torch.cuda.get_device_name(0)
    major, minor = torch.cuda.get_device_capability(0)
    note = "" if (major, minor) == (9, 0) else " (Argus targets sm_90a: H100/H200)"
    return f"GPU: {name}, sm_{major}{minor}{note}"


def format_table(rows) -> str:
    header = ("atom", "tile", "threads x values", "bijective", "PTX formula", "hardware",
              "drawing")
    body = [(r.name, f"{r.tile[0]}x{r.tile[1]}", f"{r.threads} x {r.values}", r.bijective,
             r.formula, r.hardware, r.drawing) for r in rows]
    widths = [max(len(str(line[k])) for line in [header, *body]) for k in range(len(header))]
    lines = ["  ".join(str(cell).ljust(w) for cell, w in zip(line, widths)).rstrip()
             for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _file_name(atom_name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in atom_name)
