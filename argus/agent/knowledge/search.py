"""Ranked retrieval over the techniques: by free text, op, shape class, profile signal.

Score = BM25-style term overlap of the query with title/summary/when/tags (title and tags
weigh double) + fixed bonuses for a matching op, shape class and signal. Deterministic:
ties break by id. No embeddings, so no network and no model download.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from argus.agent.knowledge.loader import load_knowledge
from argus.agent.knowledge.schema import Technique

_WORD = re.compile(r"[a-z0-9]+")
OP_BONUS, SHAPE_BONUS, SIGNAL_BONUS = 2.0, 1.5, 3.0


def _terms(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _document(t: Technique) -> list[str]:
    heavy = _terms(t.title + " " + " ".join(t.tags) + " " + t.id) * 2
    return heavy + _terms(" ".join((t.summary, t.when, " ".join(t.signals),
                                    " ".join(t.knobs), t.expected_gain)))


def search(query: str = "", *, op: str | None = None, shape_classes: Iterable[str] = (),
           signals: Iterable[str] = (), top_k: int = 5,
           techniques: tuple[Technique, ...] | None = None) -> list[tuple[float, Technique]]:
    """The best `top_k` (score, technique) pairs; techniques of another op are excluded."""
    pool = [t for t in (techniques or load_knowledge()) if op is None or op in t.ops]
    docs = {t.id: Counter(_document(t)) for t in pool}
    n = max(len(pool), 1)
    df = Counter(term for d in docs.values() for term in d)
    avg = sum(sum(d.values()) for d in docs.values()) / n
    query_terms = _terms(query)
    shapes, sigs = set(shape_classes), set(signals)
    scored = []
    for t in pool:
        d = docs[t.id]
        length = sum(d.values())
        score = 0.0
        for term in query_terms:
            tf = d.get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
        if op is not None:
            score += OP_BONUS if t.ops[0] == op else OP_BONUS / 2
        if shapes and (shapes & set(t.shape_classes) or "any" in t.shape_classes):
            score += SHAPE_BONUS if shapes & set(t.shape_classes) else SHAPE_BONUS / 3
        score += SIGNAL_BONUS * len(sigs & set(t.signals))
        scored.append((score, t))
    scored.sort(key=lambda p: (-p[0], p[1].id))
    return scored[:max(0, top_k)]


query_terms = _terms          # public names for callers that filter by term overlap
document_terms = _document


def get_technique(technique_id: str) -> Technique | None:
    return next((t for t in load_knowledge() if t.id == technique_id), None)
