"""Structure: params, constants, launch, roles, loops, if, schedules, assume, tags."""

import pytest

from argus.frontend import parse_source
from argus.ir.types import DType, GlobalTensorType, ScalarType


def test_header_params_constants_launch():
    src = '''
from argus.lang import *
TILE = 32
@kernel(grid=("cdiv(M, BM)", 4), block=256, cluster=(2, 1))
def k(X: Tensor["M", TILE, fp8e4m3], n: Scalar[int32], BM: const = TILE * 2):
    assume(M % BM == 0)
'''
    k = parse_source(src, "h.py")["k"]
    assert [p.name for p in k.params] == ["X", "n"]
    assert k.params[0].type == GlobalTensorType(("M", 32), DType.fp8e4m3)
    assert k.params[1].type == ScalarType(DType.int32)
    assert k.constants == {"BM": 64}
    assert k.launch.grid == ("cdiv(M, 64)", "4")
    assert (k.launch.block, k.launch.cluster) == (256, (2, 1, 1))
    assert [s.name for s in k.symbols] == ["M"]
    assert len(k.assumptions) == 1 and k.assumptions[0].loc.line == 6


def test_parsing_does_not_execute_the_module():
    src = '''
import os
os.system("touch /tmp/argus_should_not_exist")
from argus.lang import *
@kernel()
def k(X: Tensor["M", fp32]):
    pass
'''
    import os
    parse_source(src, "x.py")
    assert not os.path.exists("/tmp/argus_should_not_exist")


def test_roles_loops_if(body_ops):
    ops = body_ops("""
        bx = block_id("x")
        with role("w", warpgroups=(1,), regs=96):
            wg = warpgroup_index()
            for j in range(2, M, 64):
                if bx * 2 + wg < j:
                    named_barrier(1, 256)
                else:
                    cluster_sync()
    """)
    assert ops == [
        "%bx = block_id {axis=x} : index",
        "role {name=w, regs=96, warpgroups=(1)} {",
        "%wg = warpgroup_index : index",
        "for 2, %M, 64 (%j: index) {",
        "%2 = arith.mul %bx, 2 : index",
        "%3 = arith.add %2, %wg : index",
        "%4 = arith.lt %3, %j : pred",
        "if %4 {",
        "barrier.named {id=1, threads=256}",
        "} else {",
        "barrier.cluster",
        "}",
        "}",
        "}",
    ]


def test_compile_time_if_is_folded(body_ops):
    assert body_ops("if 2 > 1:\n    sync_block()\nelse:\n    cluster_sync()") == ["barrier.block"]


def test_schedule_is_recorded_in_launch(compile_body):
    k = compile_body("""
        for i, tm, tn in schedule(M // 128, N // 256, order="swizzled", group=4):
            t = tile(C, (128, 256), (tm, tn))
    """)
    (s,) = k.launch.schedules
    assert (s.tiles, s.order, s.group) == (("M // 128", "N // 256"), "swizzled", 4)
    (op,) = [o for o in k.walk() if o.opcode == "schedule"]
    assert [a.name for a in op.regions[0].args] == ["i", "tm", "tn"]


def test_schedule_order_is_checked(dsl_error):
    err = dsl_error("for i, t in schedule(4, order=\"zigzag\"):\n    pass")
    assert "unknown schedule order 'zigzag'" in err.message and "grouped" in err.hint


def test_role_on_missing_warpgroup(dsl_error):
    err = dsl_error('with role("p", warpgroups=(2,), regs=40):\n    pass', block=256)
    assert err.body_line == 1 and "warpgroup 2 does not exist" in err.message


def test_roles_must_not_overlap(dsl_error):
    err = dsl_error('''
        with role("p", warpgroups=(0,), regs=40):
            pass
        with role("c", warpgroups=(0, 1), regs=232):
            pass
    ''')
    assert err.body_line == 3 and "already run role p" in err.message


def test_register_budget_is_checked(dsl_error):
    err = dsl_error('with role("p", warpgroups=(0,), regs=41):\n    pass')
    assert "setmaxnreg takes 24..256 in steps of 8" in err.message


def test_warpgroup_index_outside_role(dsl_error):
    err = dsl_error("wg = warpgroup_index()")
    assert "only meaningful inside a role" in err.message


def test_false_assumption(dsl_error):
    err = dsl_error("assume(3 > 4)")
    assert "false for every launch" in err.message


def test_tag_assert_and_add_tag(body_ops):
    ops = body_ops("""
        x = load(tile(C, (64, 64), (1, 2)), "blocked")
        dst = tile(C, (64, 64), (1, 2))
        for j in range(4):
            y = add_tag(x, iteration=j)
            tag_assert(tag(y).iteration == j and tag(y).row == coord(dst)[0] + 64)
    """)
    assert ops[4] == "%y = tag.add %x, %j {names=(iteration)} : frag<fp32>[64, 64, layout=blocked]"
    assert ops[5].startswith("tag.assert %y, %j, %dst {pred=((tag($0).iteration == $1) and "
                             "(tag($0).row == (coord($2)[0] + 64))), text=")


def test_tag_outside_assert(dsl_error):
    err = dsl_error('x = load(tile(C, (64, 64), (0, 0)), "blocked")\nt = tag(x)')
    assert err.body_line == 2 and "inside tag_assert" in err.message


def test_grouped_schedule_needs_2d(dsl_error):
    err = dsl_error('for i, t in schedule(8, order="grouped", group=2):\n    pass')
    assert err.body_line == 1 and "needs a 2-D tile grid" in err.message


def test_pipeline_helper_expands_to_stage_and_phase(body_ops):
    ops = body_ops("""
        for i in range(3):
            for k, s, ph in pipeline(K // 64, stages=4, start=i * 7):
                named_barrier(1, 128)
    """)
    assert ops == [
        "for 0, 3, 1 (%i: index) {",
        "%0 = arith.floordiv %K, 64 : index",
        "%1 = arith.mul %i, 7 : index",
        "for 0, %0, 1 (%k: index) {",
        "%2 = arith.add %1, %k : index",
        "%s = arith.mod %2, 4 : index",
        "%4 = arith.floordiv %2, 4 : index",
        "%ph = arith.and %4, 1 : index",
        "barrier.named {id=1, threads=128}",
        "}",
        "}",
    ]


def test_pipeline_binds_three_names(dsl_error):
    err = dsl_error("for k, s in pipeline(8, stages=2):\n    pass")
    assert "binds 3 name(s)" in err.message


@pytest.mark.parametrize("cond, kept", [
    ("2 > 1 or bx > 0", None),                 # decided: no comparison emitted, no branch
    ("2 < 1 and bx > 0", "cluster"),
    ("2 < 1 or bx > 0", "branch"),             # the constant drops out: only bx > 0
    ("bx > 0 and 2 > 1", "branch"),
    ("bx > 0 or 2 < 1", "branch"),
    ("1 and bx > 0", "branch"),                # an int knob (DEFER = 1) as a truth value
    ("0 and bx > 0", "cluster"),
    ("3 or bx > 0", None),
    ("bx > 0 and 1", "branch"),
    ("bx > 0 or 0", "branch"),
])
def test_and_or_fold_around_a_compile_time_operand(body_ops, cond, kept):
    ops = body_ops(f'bx = block_id("x")\nif {cond}:\n    sync_block()\nelse:\n    cluster_sync()')
    logic = [o for o in ops if "arith.lor" in o or "arith.land" in o]
    assert logic == []
    if kept is None:
        assert ops[-1] == "barrier.block" and not any(o.startswith("if ") for o in ops)
    elif kept == "cluster":
        assert ops[-1] == "barrier.cluster" and not any(o.startswith("if ") for o in ops)
    else:
        (cmp,) = [o for o in ops if "arith.gt" in o]
        (branch,) = [o for o in ops if o.startswith("if ")]
        assert cmp.split(" = ")[0] in branch


def test_walked_sums_a_weight_over_the_schedule_and_takes_its_step_counter(compile_body):
    k = compile_body("""
        for i, tm in schedule(M // 128):
            nj = tm + 1
            g0 = walked(nj)
            for j in range(nj):
                t = tile(C, (128, 256), (tm, g0 + j))
    """)
    (sched,) = [o for o in k.walk() if o.opcode == "schedule"]
    (op,) = [o for o in k.walk() if o.opcode == "walked"]
    assert op in sched.regions[0].ops                      # directly in the body
    assert op.arg("iteration") is sched.regions[0].args[0]   # the frontend added i


@pytest.mark.parametrize("body, line, words", [
    ("g0 = walked(4)", 1, "not inside one"),
    ("for i, t in schedule(4):\n    for j in range(t):\n        g0 = walked(t)", 3,
     "inside a loop or a branch"),
    ("for i, t in schedule(4):\n    if t > 1:\n        g0 = walked(t)", 3,
     "inside a loop or a branch"),
])
def test_walked_outside_a_schedule_body_is_refused_at_its_line(dsl_error, body, line, words):
    err = dsl_error(body)
    assert err.body_line == line and words in err.message
    assert "walked(nj)" in err.hint
