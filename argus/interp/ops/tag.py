"""Tags in the value interpreter: data passes through unchanged. Tag assertions are the
verifier's job; this evaluator does not track tags (so it does not check them, nor the
tag assumptions of `assume(tag(x).f == ...)`)."""

from __future__ import annotations

from ._rule import pure


@pure
def _add(agent, op, args):
    return op.arg("x", args)


@pure
def _assert(agent, op, args):
    return None


RULES = {"tag.add": _add, "tag.assert": _assert, "tag.assume": _assert,
         "tag.heads": _assert}
