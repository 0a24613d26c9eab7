"""Why a verified mutant computed a wrong answer: the class of issue 19 its mistake belongs
to, from the operator that made it (and, for the older operators, explain.py's rules).

Issue 19's classes: 1 the tensor an operand comes from is never checked; 2 an undecided,
unmodelled or crashed pass leaves exit status 0 (walk orders, resets, extents the passes
cannot read); 3 vacuity (a loop that never runs); 4 barriers reached by part of the block.
A failure whose mutant added warnings the unmutated kernel does not have is marked
`warned`: once `argus check` calls such a result "unverified" (class 2) it is no longer
accepted."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    label: str
    issue_class: int | None       # the numbered class of issue 19, None when outside them


BY_OPERATOR = {
    "operand_tensor": Cause("wrong tensor: an operand read from another tensor or buffer", 1),
    "zero_trip": Cause("zero-trip loop: a loop that never runs", 3),
    "extent_compare": Cause("a loop extent written as a comparison", 2),
    "sync_in_role": Cause("sync_block() reached by part of the block", 4),
    "walk_order": Cause("roles walk the tiles in different orders", 2),
    "acc_reset": Cause("an accumulator never reset", 2),
    "step_guard": Cause("a data op of a loop run on some of its steps only (an if on the "
                        "loop's counter)", 3),
}
VALUES = {"reduction": Cause("value arithmetic changed (a reduction or a state swapped): the "
                             "verifier proves where values go, not what arithmetic makes them",
                             None)}
RESET = Cause("an accumulator never reset", 2)
NO_STORE = Cause("the output's store dropped: nothing covers the output", 3)
UNDECIDED = Cause("accepted with new warnings (undecided or not modelled)", 2)


def cause_of(row: dict) -> Cause:
    """`row`: a soundness report row (operator, before, after, new_warnings, ...)."""
    if row["operator"] in BY_OPERATOR:
        return BY_OPERATOR[row["operator"]]
    if row["operator"] == "drop_stmt" and row["before"].startswith("assign(") and \
            row["before"].rstrip(")").endswith(", 0.0"):
        return RESET
    if row["operator"] == "drop_stmt" and row["before"].startswith(("store(", "tma_store(")):
        return NO_STORE
    from tools.mutation.explain import explain
    rule = explain(dict(row, **{"class": "missed"}))
    if rule is not None:
        return Cause(f"{row['operator']}: {rule.kind}", 2 if row.get("new_warnings") else None)
    if row.get("new_warnings"):
        return UNDECIDED
    if row["operator"] in VALUES:
        return VALUES[row["operator"]]
    return Cause(f"{row['operator']}: unexplained", None)
