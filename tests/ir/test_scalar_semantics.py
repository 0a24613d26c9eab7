"""What a scalar arith op computes is written once, in the op table (argus/ir/ops/arith.py),
and every stage agrees with it: the interpreter's rules, the frontend's constant folding
(in a kernel body and in module constants), and the z3 terms of the verifier
(argus/verify/arith.py, through each pass's entry point: the tag pass's 64-bit terms, the
protocol pass's 32-bit ones), evaluated with z3.simplify on constants, on a grid of small
non-negative ints. Floor division and modulo are Python's (floor) for every sign in the
table and the interpreter; the verifier's unsigned terms agree on the naturals."""

from __future__ import annotations

import ast
import itertools
import math
import re

import pytest
import z3

from argus.frontend.parse import _module_constants
from argus.frontend.visitor import KernelVisitor
from argus.interp.ops.arith import RULES as INTERP
from argus.ir import OPS
from argus.ir.ops import arith as table
from argus.verify import arith as terms
from argus.verify.protocol.terms import Terms
from argus.verify.smt import Context
from argus.verify.tags import scalars

SMALL = range(7)
INT_BINARY = [n for n in table.BINARY if n not in ("land", "lor")]
# the Python syntax of each op the frontend folds from an expression
SYNTAX = {"add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "floordiv": "{a} // {b}",
          "mod": "{a} % {b}", "min": "minimum({a}, {b})", "max": "maximum({a}, {b})",
          "and": "{a} & {b}", "or": "{a} | {b}", "xor": "{a} ^ {b}", "shl": "{a} << {b}",
          "shr": "{a} >> {b}", "eq": "{a} == {b}", "ne": "{a} != {b}", "lt": "{a} < {b}",
          "le": "{a} <= {b}", "gt": "{a} > {b}", "ge": "{a} >= {b}", "land": "{a} and {b}",
          "lor": "{a} or {b}", "neg": "-{a}", "not": "not {a}"}


def pairs(name):
    """The grid of one binary op: divisors from 1, shift amounts below 5."""
    rhs = range(1, 7) if name in ("floordiv", "mod") else range(5) if name in ("shl", "shr") \
        else SMALL
    return list(itertools.product(SMALL, rhs))


def semantics(name):
    return OPS[f"arith.{name}"].semantics


def interp(name, *args):
    gen = INTERP[f"arith.{name}"](None, None, list(args))
    with pytest.raises(StopIteration) as stop:
        next(gen)
    return stop.value.value


@pytest.fixture(scope="module")
def visitor():
    fn = ast.parse("def k():\n    pass\n").body[0]
    return KernelVisitor(fn, "<scalar semantics>", ["def k():", "    pass"], {})


def folded(visitor, name, *args):
    """The frontend's fold of the op written in Python over constants."""
    text = SYNTAX[name].format(a=args[0], b=args[-1])
    return visitor.expr(ast.parse(text, mode="eval").body)


def value(t, width):
    """A z3 constant's value: a bool, or an int mod 2^width."""
    s = z3.simplify(t)
    if z3.is_bool(s):
        assert z3.is_true(s) or z3.is_false(s), s
        return z3.is_true(s)
    assert z3.is_bv_value(s), s
    assert s.size() == width, (s, width)
    return s.as_long()


def modular(x, width):
    return x if isinstance(x, bool) else x % (1 << width)


def rendered(name, args, width):
    """arith.<name> rendered by argus.verify.arith on z3 constants, on a constant and a term
    and on a term and a constant, with each pass's product (the tag pass's folds a product
    of two constant terms; the protocol pass's makes it an atom, so it gets one constant)."""
    mul = Context().mul if width == 64 else Terms().mul
    if len(args) == 1:
        return [terms.unary(name, z3.BitVecVal(args[0], width), width)]
    a, b = args
    out = []
    if name != "mul" or width == 64:
        out.append(terms.binary(name, z3.BitVecVal(a, width), z3.BitVecVal(b, width), width,
                                mul))
    out.append(terms.binary(name, a, z3.BitVecVal(b, width), width, mul))
    out.append(terms.binary(name, z3.BitVecVal(a, width), b, width, mul))
    return out


def test_every_arith_op_has_semantics_and_a_template():
    specs = [s for s in OPS.values() if s.family == "arith"]
    assert {s.opcode[6:] for s in specs} == {*table.BINARY, *table.UNARY}
    for s in specs:
        assert callable(s.semantics), s.opcode
        names = {o.name for o in s.operands}
        for template in (s.cuda, table.NONNEGATIVE.get(s.opcode[6:]),
                         table.INT.get(s.opcode[6:])):
            if template is not None:
                assert set(re.findall(r"\{(\w+)\}", template)) == names
                template.format(**{n: "v" for n in names})


@pytest.mark.parametrize("name", INT_BINARY)
def test_binary_op_agrees_everywhere(name, visitor):
    fn = semantics(name)
    for a, b in pairs(name):
        want = fn(a, b)
        assert type(want) is (bool if name in ("eq", "ne", "lt", "le", "gt", "ge") else int)
        assert interp(name, a, b) == want, (a, b)
        assert folded(visitor, name, a, b) == want, (a, b)
        for width in (64, 32):
            for t in rendered(name, (a, b), width):
                assert value(t, width) == modular(want, width), (name, a, b, width, t)
        # each pass's entry point: the tag pass (64 bits), the protocol pass (32)
        tag = scalars.binary(Context(), name, z3.BitVecVal(a, 64), b)
        assert value(tag, 64) == modular(want, 64), (a, b)
        assert scalars.binary(Context(), name, a, b) == want
        proto = Terms().render(name, a, z3.BitVecVal(b, 32))
        assert value(proto, 32) == modular(want, 32), (a, b)


@pytest.mark.parametrize("name", ["land", "lor", "eq", "ne"])
def test_predicate_op_agrees_everywhere(name, visitor):
    fn = semantics(name)
    for a, b in itertools.product((False, True), repeat=2):
        want = fn(a, b)
        assert interp(name, a, b) == want
        assert folded(visitor, name, a, b) == want
        for x, y in ((z3.BoolVal(a), z3.BoolVal(b)), (a, z3.BoolVal(b)), (z3.BoolVal(a), b)):
            assert value(terms.binary(name, x, y, 64, None), 64) == want
            assert value(scalars.binary(Context(), name, x, y), 64) == want
    if name in ("land", "lor"):     # ints as C reads them in a condition: nonzero is true
        for a, b in itertools.product(SMALL, repeat=2):
            assert semantics(name)(a, b) == interp(name, a, b) == fn(bool(a), bool(b))


def test_unary_ops_agree_everywhere(visitor):
    for a in SMALL:
        want = semantics("neg")(a)
        assert want == -a == interp("neg", a) == folded(visitor, "neg", a)
        for width in (64, 32):
            assert value(rendered("neg", (a,), width)[0], width) == modular(want, width)
        assert value(scalars.unary("neg", z3.BitVecVal(a, 64)), 64) == modular(want, 64)
        # `not` of an int is its complement, as C's ~ (the table's INT template)
        assert semantics("not")(a) == ~a == interp("not", a)
        for width in (64, 32):
            assert value(rendered("not", (a,), width)[0], width) == modular(~a, width)
    for p in (False, True):
        assert semantics("not")(p) is (not p)
        assert interp("not", p) is (not p) and folded(visitor, "not", p) is (not p)
        assert value(terms.unary("not", z3.BoolVal(p), 64), 64) is (not p)
        assert value(scalars.unary("not", z3.BoolVal(p)), 64) is (not p)


def test_module_constants_fold_through_the_table():
    fold = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//"}
    for name, sign in fold.items():
        for a, b in pairs(name):
            consts = _module_constants(ast.parse(f"X = {a} {sign} {b}"), "<t>")
            assert consts["X"] == semantics(name)(a, b), (name, a, b)


def test_floor_division_and_modulo_are_pythons_for_every_sign(visitor):
    grid = [(a, b) for a in range(-9, 10) for b in range(-4, 5) if b]
    for a, b in grid:
        q, r = semantics("floordiv")(a, b), semantics("mod")(a, b)
        assert q == math.floor(a / b) and r == a - b * q, (a, b)
        assert r == 0 or (r < 0) == (b < 0), (a, b)       # the remainder has b's sign
        assert interp("floordiv", a, b) == q and interp("mod", a, b) == r
        assert folded(visitor, "floordiv", a, b) == q and folded(visitor, "mod", a, b) == r
    assert semantics("floordiv")(-7, 2) == -4 and semantics("mod")(-7, 3) == 2
    assert semantics("floordiv")(7, -2) == -4 and semantics("mod")(7, -3) == -2
    # the C expressions: argus::floordiv / argus::mod (Python's meaning) unless both
    # operands are known >= 0, where C's truncating / and % agree with it
    assert OPS["arith.floordiv"].cuda == "argus::floordiv({lhs}, {rhs})"
    assert OPS["arith.mod"].cuda == "argus::mod({lhs}, {rhs})"
    assert table.NONNEGATIVE == {"floordiv": "({lhs}) / ({rhs})", "mod": "({lhs}) % ({rhs})"}
    for a, b in itertools.product(SMALL, range(1, 7)):
        assert int(a / b) == semantics("floordiv")(a, b)            # C's / on naturals
        assert int(math.fmod(a, b)) == semantics("mod")(a, b)       # C's % on naturals
