"""`argus demo`: the main job on any machine, GPU or not.

Checks every Hopper atom against its own formula and the hardware dump, draws each atom
to OUT/<atom>.svg, prints one summary row per atom, and says whether a CUDA GPU is here.
Exit status 1 when any check fails.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

from argus.cli import atom_report


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo", help="check and draw every Hopper atom; report the GPU",
        description=__doc__)
    parser.add_argument("--out", default="out/layouts", metavar="DIR",
                        help="where the drawings go (default: out/layouts)")
    parser.add_argument("--no-draw", action="store_true", help="check only, draw nothing")
    parser.set_defaults(run=run_demo)


def run_demo(args) -> int:
    from argus.layout.draw import draw_tv
    from argus.layout.hopper import atom_names, get_atom

    started = time.perf_counter()
    print(f"argus demo on Python {platform.python_version()}, {platform.machine()}")
    print(gpu_line())
    probe_path = atom_report.find_probe()
    probe = atom_report.load_probe(probe_path)
    if probe_path is None:
        print(f"hardware dump {atom_report.PROBE_RELPATH} not found: hardware checks skipped")
    else:
        print(f"hardware dump: {probe_path}")

    out_dir = Path(args.out)
    rows = []
    for name in atom_names():
        tv = get_atom(name)
        formula, n_threads, n_values = atom_report.check_own_formula(tv)
        hardware = atom_report.check_hardware(tv, probe)
        drawing = "-" if args.no_draw else str(draw_tv(tv, out_dir / f"{_file_name(name)}.svg"))
        tile = tuple(tv.owner_table()[0].shape)
        rows.append(atom_report.AtomRow(name, tile, n_threads, n_values, formula, hardware,
                                        drawing))
    print()
    print(format_table(rows))
    failed = [row.name for row in rows if row.failed]
    elapsed = time.perf_counter() - started
    print()
    if failed:
        print(f"{len(failed)} of {len(rows)} atoms FAILED: {', '.join(failed)} ({elapsed:.1f} s)")
        return 1
    print(f"all {len(rows)} atoms hold ({elapsed:.1f} s)")
    return 0


def gpu_line() -> str:
    """One line on the GPU: none, torch missing, or the device found (nothing runs on it yet)."""
    try:
        import torch
    except ImportError:
        return "GPU: not checked (torch is not installed; pip install 'argus-kernels[gpu]')"
    if not torch.cuda.is_available():
        return "GPU: none found (CPU-only run)"
    name = torch.cuda.get_device_name(0)
    major, minor = torch.cuda.get_device_capability(0)
    note = "" if (major, minor) == (9, 0) else " (Argus targets sm_90a: H100/H200)"
    return (f"GPU: {name}, sm_{major}{minor}{note}; GPU checks come with the backend "
            "(nothing runs on it yet)")


def format_table(rows) -> str:
    header = ("atom", "tile", "threads x values", "own formula", "hardware", "drawing")
    body = [(r.name, f"{r.tile[0]}x{r.tile[1]}", f"{r.threads} x {r.values}", r.formula,
             r.hardware, r.drawing) for r in rows]
    widths = [max(len(str(line[k])) for line in [header, *body]) for k in range(len(header))]
    lines = ["  ".join(str(cell).ljust(w) for cell, w in zip(line, widths)).rstrip()
             for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _file_name(atom_name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in atom_name)
