"""The least value of one term that a satisfiable query allows: the search that every
counterexample minimisation runs, once per term (smt.least over bit-vectors, the MoE
counterexamples' tags/abstraction over integers).

The search asks "can the term be at most b?" (a probe; a sat answer brings a model and
the term's value v <= b in it) and ends at the least value, which is unique: how it gets
there changes how many probes it takes, never the answer. Most terms of a minimal model
are 0 or 1, so 1 is asked first. A model found tends to sit on the least value itself (the
solver's answer lands on a bound), so after a sat probe the next one asks just below that
value: unsat ends the search in one probe, where halving the interval would take about
log2 of it (an unsat probe is the costly kind, a proof). Halving and just-below alternate,
so no term takes more than about twice the probes of a plain binary search.
"""

from __future__ import annotations

from typing import Callable, Optional

Probe = Callable[[int], Optional[int]]      # bound -> the term's value in a model, or None


def least_value(probe: Probe, start: int) -> int:
    """The least value of a term whose value is `start` in a model of the query;
    `probe(b)` answers with the term's value in a model where it is at most b, or None
    when no model has it so (the term is unsigned: never below 0)."""
    best, lo = start, 0
    if best > 1:
        found = probe(1)
        if found is not None:
            best = found
        else:
            lo = 2
    just_below = True
    while lo < best:
        bound = best - 1 if just_below else (lo + best) // 2
        found = probe(bound)
        if found is not None:
            best = found
        else:
            lo = bound + 1
        just_below = not just_below
    return best
