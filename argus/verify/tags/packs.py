"""Idiom packs: how the tag pass's transfer rules are put together.

A pack is a family of idioms the tag pass knows (the generic transfers every kernel uses; the
flash-attention softmax; MoE routing), stated as two tables:

- `rules`: opcode -> rule(w, op), the opcode's rule from this pack on, replacing what the
  packs before gave it;
- `refines`: opcode -> rule(w, op, base), a rule that handles the values of its own idiom and
  passes every other op to `base`, the opcode's rule as the packs before it left it. A pack
  refines only what an earlier pack handles (a refinement with nothing under it is a
  mistake in the order, refused when the table is built);
- `finish`: checks run on the walker once the whole kernel is walked (a proof that rests
  on something the kernel does after it, such as a store that follows a loop).

`compose(packs)` builds the table in the order given, and `chain(opcode)` says which rule
sees an op first and what it falls back to, pack by pack. rules.py states the order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

Rule = Callable[..., None]


@dataclass(frozen=True)
class IdiomPack:
    name: str
    about: str
    rules: dict[str, Rule] = field(default_factory=dict)
    refines: dict[str, Rule] = field(default_factory=dict)
    finish: tuple[Callable, ...] = ()


@dataclass(frozen=True)
class Composed:
    rules: dict[str, Rule]
    chains: dict[str, tuple[tuple[str, str], ...]]   # opcode -> ((pack, rule), ...) first first

    def chain(self, opcode: str) -> tuple[tuple[str, str], ...]:
        return self.chains.get(opcode, ())


def _name(rule: Rule) -> str:
    return f"{rule.__module__.rsplit('.', 1)[-1]}.{rule.__name__}"


def _refined(refine: Rule, base: Rule) -> Rule:
    def rule(w, op) -> None:
        refine(w, op, base)
    rule.__name__ = refine.__name__
    rule.__module__ = refine.__module__
    return rule


def compose(packs: tuple[IdiomPack, ...]) -> Composed:
    rules: dict[str, Rule] = {}
    chains: dict[str, tuple[tuple[str, str], ...]] = {}
    for pack in packs:
        both = set(pack.rules) & set(pack.refines)
        if both:
            raise ValueError(f"idiom pack {pack.name} both replaces and refines "
                             f"{', '.join(sorted(both))}")
        for opcode, rule in pack.rules.items():
            rules[opcode] = rule
            chains[opcode] = ((pack.name, _name(rule)),)
        for opcode, refine in pack.refines.items():
            base = rules.get(opcode)
            if base is None:
                raise ValueError(f"idiom pack {pack.name} refines {opcode}, which no pack "
                                 "before it handles: give it a rule there, or make this a rule")
            rules[opcode] = _refined(refine, base)
            chains[opcode] = ((pack.name, _name(refine)),) + chains[opcode]
    return Composed(rules, chains)


def meaning_rule(steps: dict, record, errors: tuple = (TypeError, ValueError, ArithmeticError)):
    """A refinement (rule(w, op, base)) for a pack that gives results a meaning of its own:
    the rule of the packs before, then `steps[opcode](w, op)`, kept by `record(w, op, m)`;
    None where the op has no step or its step raises one of `errors` (it cannot say)."""
    def follow(w, op, base) -> None:
        base(w, op)
        try:
            m = steps.get(op.opcode, lambda w, op: None)(w, op)
        except errors:
            m = None
        record(w, op, m)
    return follow

