"""The iterated arg-max (top-k) idiom pack (packs.py; rules.py states its place in the
order): selection meanings (ranked.py) moved through the ops by ranked_rules.py, carried
through loops by ranked_loops.py, and a stored selection's contract (ranked_store.py)."""

from __future__ import annotations

from . import ranked_rules, ranked_store
from .packs import IdiomPack

PACK = IdiomPack(
    "ranked",
    "iterated arg-max selection (top-k): the rank order of a data row's columns, the "
    "chosen columns and their softmax weights, and the contract of storing them",
    refines={**{opcode: ranked_rules.follow for opcode in ranked_rules.STEPS},
             "frag.assign": ranked_rules.frag_assign,
             "store": ranked_store.store})
