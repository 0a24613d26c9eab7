"""The counting-sort idiom pack (packs.py; rules.py states its place in the order): count
meanings of a placement kernel's vectors (countsort.py) moved by countsort_rules.py,
carried through loops by countsort_loops.py, and the contract of its scatters
(countsort_scatter.py)."""

from __future__ import annotations

from . import countsort_rules, countsort_scatter
from .packs import IdiomPack

PACK = IdiomPack(
    "countsort",
    "counting sort: entries of a key array counted by prefix sums of indicators, a count "
    "carried over the tiles, and scatters of each entry to its rank slot",
    refines={**{opcode: countsort_rules.follow for opcode in countsort_rules.STEPS},
             "frag.assign": countsort_rules.frag_assign,
             "frag.alloc": countsort_rules.frag_alloc,
             "scan.prefix_sum": countsort_rules.prefix_sum,
             "indices.element": countsort_rules.element,
             "scatter.store": countsort_scatter.scatter})
