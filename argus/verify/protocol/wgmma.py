"""wgmma ordering, per warpgroup: a wgmma_fence() between any register access to a
fragment and the wgmma that uses it (and before the first wgmma), and no access to an
accumulator or register A operand of a wgmma that has not retired (wgmma_wait) yet.
Tracked by walking each role in program order: groups are closed by wgmma_commit and
retired by wgmma_wait(pending) (all but the newest `pending` groups)."""

from __future__ import annotations

from argus.ir.nodes import Value
from argus.ir.types import FragmentType

from .report import finding, first_run, surface
from .walk import role_blocks, walk


class _State:
    def __init__(self):
        self.fenced = False
        self.open: list = []        # (mma op, frags) not yet committed
        self.groups: list = []      # committed groups, oldest first: list of (op, frags)

    def copy(self):
        s = _State()
        s.fenced, s.open, s.groups = self.fenced, list(self.open), [list(g) for g in
                                                                     self.groups]
        return s

    def replace(self, other):
        self.fenced, self.open, self.groups = other.fenced, other.open, other.groups

    def join(self, other):
        self.fenced = self.fenced and other.fenced
        self.open = self.open + [x for x in other.open if x not in self.open]
        if len(other.groups) > len(self.groups):
            self.groups = other.groups

    def in_flight(self):
        for op, frags in self.open:
            yield op, frags
        for g in self.groups:
            yield from g


def _frags(op):
    return [o for o in op.operands if isinstance(o, Value) and isinstance(o.type, FragmentType)]


def check(m) -> list:
    out, seen = [], set()

    def report(key, f):
        if key not in seen:
            seen.add(key)
            out.append(f)

    def visit(op, s: _State):
        code = op.opcode
        if code == "wgmma.fence":
            s.fenced = True
        elif code == "wgmma.mma":
            if not s.fenced:
                report(("fence", id(op)), finding(
                    "protocol.wgmma-fence", op,
                    "this wgmma is not preceded by wgmma_fence() since its accumulator or "
                    "register operands were last written (or since the role began)",
                    "call wgmma_fence() right before the first wgmma of each k-step",
                    first_run(m, op)))
            s.open.append((op, set(_frags(op))))
        elif code == "wgmma.commit":
            if s.open:
                s.groups.append(list(s.open))
                s.open = []
        elif code == "wgmma.wait":
            keep = int(op.attrs.get("pending", 0))
            s.groups = s.groups[len(s.groups) - keep:] if keep else []
        else:
            touched = set(_frags(op)) | {r for r in op.results
                                         if isinstance(r.type, FragmentType)}
            if touched:
                for mma, frags in s.in_flight():
                    hit = touched & frags
                    if hit:
                        name = sorted(v.name for v in hit)[0]
                        report(("flight", id(op)), finding(
                            "protocol.accumulator-in-flight", op,
                            f"{surface(op)} touches {name} while the wgmma at line "
                            f"{mma.loc.line} that uses it may still be in flight",
                            "call wgmma_wait(0) (after wgmma_commit()) before touching the "
                            "accumulator", first_run(m, op)))
                        break
                s.fenced = False

    for role_op, body in role_blocks(m.kernel):
        s = _State()
        walk(body, s, visit)
        if any(True for _ in s.in_flight()):
            mma = next(s.in_flight())[0]
            report(("unwaited", id(role_op)), finding(
                "protocol.wgmma-unwaited", mma,
                (f"role {role_op.attrs['name']}" if role_op is not None else "the kernel")
                + " can end with this wgmma still in flight",
                "end with wgmma_wait(0)", severity="warning"))
    return out

