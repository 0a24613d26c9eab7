"""The counting-sort idiom pack (packs.py; rules.py states its place in the order): count
meanings of a placement kernel's vectors (countsort.py) moved by countsort_rules.py,
carried through loops by countsort_loops.py (per lane: countsort_lanes.py), and the
contracts of its scatters (countsort_scatter.py) and of a stored count
(countsort_store.py)."""

from __future__ import annotations

from . import countsort_rules, countsort_scatter, countsort_store
from .packs import IdiomPack

PACK = IdiomPack(
    "countsort",
    "counting sort: entries of a key array counted by prefix sums of indicators, a count "
    "carried over the tiles (or per lane), stored counts, and scatters of each entry to "
    "its rank slot",
    refines={**{opcode: countsort_rules.follow for opcode in countsort_rules.STEPS},
             "frag.assign": countsort_rules.frag_assign,
             "frag.alloc": countsort_rules.frag_alloc,
             "scan.prefix_sum": countsort_rules.prefix_sum,
             "indices.element": countsort_rules.element,
             "scatter.store": countsort_scatter.scatter,
             "store": countsort_store.store},
    finish=(countsort_scatter.finish,))
