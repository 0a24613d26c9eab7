"""Stable names for mutants and a seeded sample of them.

A mutant's id (`gemm-017`) is its place in generation order, so an edit elsewhere in the
kernel renumbers it. Its key names what it changes instead: target, operator, the changed
line before and after, and which occurrence of that same change it is (the producer's and
the consumer's identical schedule lines). The CI sample and its expected failures are
keyed on it, so they survive edits to other lines of a kernel."""

from __future__ import annotations

import hashlib
from collections import defaultdict

SAMPLE_SEED = "argus-soundness-1"
SAMPLE_SIZE = 2          # mutants per operator in the CI sample


def keys(mutants) -> dict[str, object]:
    """{key: mutant} for one target's mutants, in generation order."""
    seen: dict[str, int] = defaultdict(int)
    out = {}
    for m in mutants:
        base = f"{m.target}:{m.operator}:{m.before} -> {m.after}"
        n = seen[base]
        seen[base] += 1
        out[f"{base}#{n}"] = m
    return out


def rank(key: str, seed: str = SAMPLE_SEED) -> str:
    return hashlib.sha256(f"{seed}|{key}".encode()).hexdigest()


def seeded_sample(keyed: dict, per_operator: int, seed: str = SAMPLE_SEED,
                  targets=None) -> dict:
    """For each operator, the `per_operator` mutants (of `targets`, default all) whose keys
    rank first under `seed`: a fixed sample that covers every operator."""
    by_op = defaultdict(list)
    for key, m in keyed.items():
        if targets is None or m.target in targets:
            by_op[m.operator].append(key)
    chosen = sorted(k for op in sorted(by_op)
                    for k in sorted(by_op[op], key=lambda k: rank(k, seed))[:per_operator])
    return {k: keyed[k] for k in chosen}
