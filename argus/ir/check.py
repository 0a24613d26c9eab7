"""IR well-formedness, stated once as rules. Each rule yields problems; `check_kernel`
raises `IRError` listing them, each naming the op and its source line.

Rules:
  known-opcode    every opcode is in the op table
  arity           operand, result, region and region-argument counts match the spec
  operand-kind    each operand has a type the spec allows for that slot
  def-before-use  a value is used only after its definition, in the same or an
                  enclosing region (region arguments are visible inside their region)
  single-def      a value is defined once
  roles           roles are not nested, name disjoint warpgroups inside the block
  tag-operands    a tag assertion's (or assumption's) predicate refers only to its own operands
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .nodes import Block, Kernel, Op, Value
from .ops import OPS
from .tagexpr import operands_of


@dataclass(frozen=True)
class Problem:
    rule: str
    op: Op | None
    message: str

    def __str__(self) -> str:
        where = f"{self.op.loc}: {self.op.opcode}: " if self.op else ""
        return f"{where}[{self.rule}] {self.message}"


class IRError(Exception):
    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("ill-formed IR:\n" + "\n".join(f"  {p}" for p in problems))


def _kind(x) -> str:
    return type(x.type).__name__ if isinstance(x, Value) else "imm"


def _rule_op_shape(op: Op) -> Iterator[Problem]:
    spec = OPS.get(op.opcode)
    if spec is None:
        yield Problem("known-opcode", op, f"unknown opcode {op.opcode!r}")
        return
    slots = list(spec.operands)
    given = list(op.operands)
    i = 0
    for slot in slots:
        if slot.variadic:
            rest = given[i:]
            i = len(given)
            for x in rest:
                if _kind(x) not in slot.kinds:
                    yield Problem("operand-kind", op, f"operand {slot.name} is {_kind(x)}, "
                                  f"expected one of {', '.join(slot.kinds)}")
            continue
        if i >= len(given):
            if not slot.optional:
                yield Problem("arity", op, f"missing operand {slot.name}")
            continue
        if _kind(given[i]) not in slot.kinds:
            yield Problem("operand-kind", op, f"operand {slot.name} is {_kind(given[i])}, "
                          f"expected one of {', '.join(slot.kinds)}")
        i += 1
    if i < len(given):
        yield Problem("arity", op, f"{len(given) - i} operand(s) too many")
    if len(op.results) != spec.results:
        yield Problem("arity", op, f"{len(op.results)} results, spec says {spec.results}")
    if len(op.regions) != spec.regions:
        yield Problem("arity", op, f"{len(op.regions)} regions, spec says {spec.regions}")
    if spec.region_args >= 0:
        for r in op.regions:
            if len(r.args) != spec.region_args:
                yield Problem("arity", op, f"region binds {len(r.args)} values, "
                              f"spec says {spec.region_args}")


def _rule_tag_operands(op: Op) -> Iterator[Problem]:
    if op.opcode not in ("tag.assert", "tag.assume"):
        return
    pred = op.attrs.get("pred")
    if pred is None:
        yield Problem("tag-operands", op, f"{op.opcode} without a pred attribute")
        return
    bad = sorted(i for i in operands_of(pred) if not 0 <= i < len(op.operands))
    if bad:
        yield Problem("tag-operands", op, f"predicate refers to operand(s) {bad}, "
                      f"the op has {len(op.operands)}")


def _rule_scopes(block: Block, visible: set, defined: set, in_role: bool,
                 out: list[Problem]) -> None:
    scope = set(visible) | set(block.args)
    for a in block.args:
        if a in defined:
            out.append(Problem("single-def", None, f"region argument %{a.name} defined twice"))
        defined.add(a)
    for op in block.ops:
        for x in op.operands:
            if isinstance(x, Value) and x not in scope:
                out.append(Problem("def-before-use", op, f"%{x.name} is used before it is "
                                   "defined or outside the region that defines it"))
        if op.opcode == "role" and in_role:
            out.append(Problem("roles", op, "a role nested inside another role"))
        for region in op.regions:
            _rule_scopes(region, scope, defined, in_role or op.opcode == "role", out)
        for r in op.results:
            if r in defined:
                out.append(Problem("single-def", op, f"%{r.name} defined twice"))
            defined.add(r)
            scope.add(r)


def _rule_roles(kernel: Kernel) -> Iterator[Problem]:
    seen: dict[int, str] = {}
    n_wg = kernel.launch.block // 128
    for op in kernel.walk():
        if op.opcode != "role":
            continue
        for wg in op.attrs.get("warpgroups", ()):
            if wg in seen:
                yield Problem("roles", op, f"warpgroup {wg} is in roles {seen[wg]} and "
                              f"{op.attrs['name']}")
            if not 0 <= wg < n_wg:
                yield Problem("roles", op, f"warpgroup {wg} does not exist: the block has "
                              f"{kernel.launch.block} threads ({n_wg} warpgroups)")
            seen[wg] = op.attrs.get("name", "?")


def problems(kernel: Kernel) -> list[Problem]:
    out: list[Problem] = []
    for op in kernel.walk():
        out.extend(_rule_op_shape(op))
        out.extend(_rule_tag_operands(op))
    _rule_scopes(kernel.body, set(kernel.params) | set(kernel.symbols), set(), False, out)
    out.extend(_rule_roles(kernel))
    return out


def check_kernel(kernel: Kernel) -> Kernel:
    found = problems(kernel)
    if found:
        raise IRError(found)
    return kernel
