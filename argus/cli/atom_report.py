"""The per-atom checks that `argus demo` reports, one row per Hopper atom.

- own formula: every (thread, value) the atom names lands on a distinct element of its
  tile, every element is reached, and `owner_table()` agrees with `coord(t, v)`;
- hardware: the owner table equals the one dumped from a real H200 (the probe file),
  or "skipped" when the probe file is not found or does not hold the atom.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROBE_RELPATH = Path("tests") / "layout" / "data" / "hopper_probe.json"


@dataclass(frozen=True)
class AtomRow:
    name: str
    tile: tuple[int, int]
    threads: int
    values: int
    formula: str  # "ok" or what went wrong
    hardware: str  # "ok", "skipped", or what went wrong
    drawing: str  # path written, or "-"

    @property
    def failed(self) -> bool:
        return self.formula != "ok" or self.hardware not in ("ok", "skipped")


def find_probe() -> Path | None:
    """The hardware dump next to the source tree, if this is a checkout (not a wheel)."""
    import argus

    candidate = Path(argus.__file__).resolve().parents[1] / PROBE_RELPATH
    return candidate if candidate.is_file() else None


def check_own_formula(tv) -> tuple[str, int, int]:
    """("ok" or a description of the first failure, thread count, value count)."""
    threads, values = tv.owner_table()
    rows, cols = threads.shape
    n_threads, n_values = int(threads.max()) + 1, int(values.max()) + 1
    hits = np.zeros((rows, cols), dtype=np.int64)
    for t in range(n_threads):
        for v in range(n_values):
            m, n = (int(x) for x in tv.coord(t, v))
            if not (0 <= m < rows and 0 <= n < cols):
                return f"T{t} V{v} -> ({m}, {n}) is outside the {rows}x{cols} tile", n_threads, n_values
            if (threads[m, n], values[m, n]) != (t, v):
                return (f"coord(T{t}, V{v}) = ({m}, {n}) but the owner table says "
                        f"T{threads[m, n]} V{values[m, n]}"), n_threads, n_values
            hits[m, n] += 1
    if (hits != 1).any():
        m, n = (int(x) for x in np.argwhere(hits != 1)[0])
        return f"element ({m}, {n}) is held {hits[m, n]} times", n_threads, n_values
    return "ok", n_threads, n_values


def check_hardware(tv, probe: dict | None) -> str:
    """Compare the owner table with the hardware dump of the same atom."""
    if probe is None or tv.name not in probe:
        return "skipped"
    threads, values = tv.owner_table()
    dumped_threads = np.asarray(probe[tv.name]["thread"])
    dumped_values = np.asarray(probe[tv.name]["value"])
    if dumped_threads.shape != threads.shape:
        return f"tile {dumped_threads.shape} on hardware, {threads.shape} here"
    wrong = np.argwhere((dumped_threads != threads) | (dumped_values != values))
    if len(wrong):
        m, n = (int(x) for x in wrong[0])
        return (f"{len(wrong)} elements differ, first ({m}, {n}): hardware "
                f"T{dumped_threads[m, n]} V{dumped_values[m, n]}, "
                f"here T{threads[m, n]} V{values[m, n]}")
    return "ok"


def load_probe(path: Path | None) -> dict | None:
    if path is None:
        return None
    return json.loads(path.read_text())
