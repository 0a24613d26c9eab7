"""The per-atom checks that `argus demo` reports, one row per Hopper atom.

Three independent descriptions of each atom must agree:
- its shape:stride layout (`coord(t, v)`), which must be a bijection onto the tile;
- the PTX ISA formula, as transcribed in tests/layout/hopper/ptx_oracles.py;
- the hardware: tables dumped from a real H200 (tests/layout/data/hopper_probe.json).
The last two live in the source checkout; where they are not found (an installed wheel),
the column says "skipped".
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROBE_RELPATH = Path("tests") / "layout" / "data" / "hopper_probe.json"
ORACLES_RELPATH = Path("tests") / "layout" / "hopper" / "ptx_oracles.py"

SKIPPED = "skipped"
_MATRIX_ATOM = re.compile(r"^(ldmatrix|stmatrix)_(x[124](?:_trans)?)$")


@dataclass(frozen=True)
class AtomRow:
    name: str
    tile: tuple[int, int]
    threads: int
    values: int
    bijective: str  # "ok" or what went wrong
    formula: str  # "ok", "skipped" or the first disagreement
    hardware: str  # "ok", "skipped" or the first disagreement
    drawing: str  # the path written, or "-"

    @property
    def failed(self) -> bool:
        return (self.bijective != "ok" or
                any(v not in ("ok", SKIPPED) for v in (self.formula, self.hardware)))


def checkout_file(relpath: Path) -> Path | None:
    """A file of the source checkout this package runs from, or None (e.g. a wheel install)."""
    import argus

    candidate = Path(argus.__file__).resolve().parents[1] / relpath
    return candidate if candidate.is_file() else None


def load_probe(path: Path | None) -> dict | None:
    return None if path is None else json.loads(path.read_text())


def load_oracles(path: Path | None):
    """The PTX-formula module of the test suite, loaded by path (it is not part of the package)."""
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location("argus_ptx_oracles", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def owner_tables(tv):
    """(thread[M,N], value[M,N], None), or (None, None, why) when `tv` is not a bijection.

    TVLayout.owner_table() evaluates coord(t, v) for every (t, v) and refuses a layout
    that misses or doubles an element; everything else here reads this one table.
    """
    try:
        threads, values = tv.owner_table()
    except ValueError as err:
        return None, None, str(err).removeprefix(f"{tv.name}: ")
    return threads, values, None


def formula_of(tv, oracles):
    """(t, v) -> (row, col) from the PTX formula for this atom, or None when there is none."""
    if oracles is None:
        return None
    if tv.name.startswith("wgmma_acc_m64n"):
        return getattr(oracles, "wgmma_accumulator", None)
    if tv.name in ("wgmma_a_rs_16bit", "wgmma_a_rs_8bit"):
        return getattr(oracles, tv.name.replace("_rs", ""), None)
    match = _MATRIX_ATOM.match(tv.name)
    element = getattr(oracles, "ldmatrix_element", None)
    if match and element is not None:
        trans = match.group(2).endswith("_trans")

        def stacked(lane, v):  # matrix i is rows 8i..8i+7 of the stacked tile
            matrix, row, col = element(lane, v, trans)
            return 8 * matrix + row, col
        return stacked
    return None


def probe_table(tv, probe: dict | None):
    """[t][v] -> (row, col) measured on hardware for this atom, or None when not dumped."""
    if probe is None:
        return None
    name = tv.name
    if name.startswith("wgmma_acc_m64n"):
        table = probe.get("wgmma_accumulator", {}).get(name.removeprefix("wgmma_acc_m64n"))
    elif name == "wgmma_a_rs_16bit":
        table = probe.get("wgmma_a_register_16bit")
    elif name == "wgmma_a_rs_8bit":
        table = probe.get("wgmma_a_register_8bit")
    elif match := _MATRIX_ATOM.match(name):
        stacked = probe.get(match.group(1), {}).get(match.group(2))
        table = None if stacked is None else [
            [(8 * m + r, c) for m, r, c in per_lane] for per_lane in stacked]
    else:
        table = None
    return table


def compare(tv, threads, values, expected, source: str) -> str:
    """"ok", or the first (t, v) whose element in the owner table differs from `expected`.

    `expected` is a function (t, v) -> (row, col) or a table [t][v] -> (row, col).
    """
    if expected is None:
        return SKIPPED
    rows, cols = np.indices(threads.shape)
    where = np.empty((tv.threads, tv.values, 2), dtype=np.int64)
    where[threads, values, 0], where[threads, values, 1] = rows, cols
    if not callable(expected) and (len(expected) != tv.threads or
                                   any(len(per_t) != tv.values for per_t in expected)):
        return f"{source} has another shape than {tv.threads} threads x {tv.values} values"
    for t in range(tv.threads):
        for v in range(tv.values):
            want = tuple(int(x) for x in (expected(t, v) if callable(expected) else expected[t][v]))
            got = (int(where[t, v, 0]), int(where[t, v, 1]))
            if got != want:
                return f"T{t} V{v}: layout {got}, {source} {want}"
    return "ok"


class TabledAtom:
    """An atom with its owner table computed once, for drawing without recomputing it."""

    def __init__(self, tv, threads, values):
        self.name, self._tables = tv.name, (threads, values)

    def owner_table(self):
        return self._tables


def check_atom(tv, oracles, probe):
    """((bijective, PTX formula, hardware) verdicts, TabledAtom or None) for one atom."""
    threads, values, problem = owner_tables(tv)
    if problem is not None:
        return (problem, "-", "-"), None
    verdicts = ("ok", compare(tv, threads, values, formula_of(tv, oracles), "PTX"),
                compare(tv, threads, values, probe_table(tv, probe), "hardware"))
    return verdicts, TabledAtom(tv, threads, values)
