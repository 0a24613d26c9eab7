"""Stores whose value an idiom pack proved: the sinks origin.py does not call unproved.

An idiom pack (ranked_store.py, placement_store.py) that proves what a store writes marks
the op here. A proof made inside a loop rests on the loop's induction hypothesis (the
meaning a carried fragment has at the top of the body): it stays *pending* until the loop's
end confirms the hypothesis (`confirm`), and is withdrawn if the step fails (`withdraw`):
the store is then reported unproved after all, with what made it so."""

from __future__ import annotations

from argus.ir.nodes import Op


def _state(w) -> dict:
    st = w.__dict__.get("_values_proved")
    if st is None:
        st = w._values_proved = {"done": set(), "loops": []}
    return st


def mark(w, op: Op) -> None:
    """The value op writes is proved (pending while inside a hypothesis' loop)."""
    st = _state(w)
    st["done"].add(id(op))
    if st["loops"]:
        st["loops"][-1].append(op)


def is_proved(w, op: Op) -> bool:
    return id(op) in _state(w)["done"]


def open_loop(w) -> None:
    _state(w)["loops"].append([])


def close_loop(w, held: bool) -> list:
    """The end of a loop whose hypothesis `held` (or not): its pending proofs move to the
    loop around it, or are withdrawn: [(op, what made its value opaque)] for the caller to
    report unproved (origin.unproved)."""
    st = _state(w)
    pending = st["loops"].pop() if st["loops"] else []
    if held:
        if st["loops"]:
            st["loops"][-1].extend(pending)
        return []
    return [x for x in (withdraw(w, op) for op in pending) if x is not None]


def remember_opaque(w, op: Op, opaque) -> None:
    """What made a proved store's value opaque (reported if the proof is withdrawn)."""
    w.__dict__.setdefault("_proved_opaque", {}).setdefault(id(op), set()).update(opaque)


def withdraw(w, op: Op):
    """A proof of the store at `op` that a later check refuted: (op, what made its value
    opaque) for the caller to report unproved (origin.unproved), or None (nothing to)."""
    st = _state(w)
    if id(op) not in st["done"]:
        return None
    st["done"].discard(id(op))
    opaque = w.__dict__.get("_proved_opaque", {}).get(id(op))
    return (op, opaque) if opaque else None
