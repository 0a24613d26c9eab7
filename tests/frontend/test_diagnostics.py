"""Every required diagnostic: the exact file:line:col and the hint."""

import pytest

from argus.frontend import DSLError, parse_source


def test_unknown_name(dsl_error):
    err = dsl_error("""
        x = tile(A, (64, 64), (0, 0))
        y = tile(Q, (64, 64), (0, 0))
    """)
    assert (err.loc.file, err.body_line, err.loc.col) == ("kern.py", 2, 14)
    assert "unknown name 'Q'" in err.message
    assert "define it" in err.hint


def test_unknown_name_suggests_close_match(dsl_error):
    err = dsl_error("""
        a_s = smem(bf16, (64, 64), stages=2)
        v = a_ss[0]
    """)
    assert err.body_line == 2 and err.hint == "did you mean 'a_s'?"


@pytest.mark.parametrize("stmt,kind,hint", [
    ("while True:\n    pass", "while statement", "for i in range"),
    ("try:\n    pass\nexcept Exception:\n    pass", "try statement", "assume"),
    ("return 1", "return statement", "store"),
    ("assert 1 == 1", "assert statement", "tag_assert"),
    ("x = 1\nx += 1", "augassign statement", "single-assignment"),
])
def test_unsupported_statements(dsl_error, stmt, kind, hint):
    err = dsl_error(stmt)
    assert kind in err.message and hint in err.hint
    assert err.body_line == stmt.count("\n") + 1 if kind == "augassign statement" else 1


@pytest.mark.parametrize("expr,kind,hint", [
    ("f = lambda x: x", "Lambda expression", "inline"),
    ("xs = [i for i in range(4)]", "ListComp expression", "comprehensions"),
    ("y = 1 if block_id(\"x\") else 2", "needs c known at compile time", "select"),
])
def test_unsupported_expressions(dsl_error, expr, kind, hint):
    err = dsl_error("z = 0\n" + expr)
    assert err.body_line == 2 and kind in err.message and hint in err.hint


def test_call_to_unknown_function(dsl_error):
    err = dsl_error("x = 1\nnp.zeros(4)")
    assert err.body_line == 2 and "unknown name 'np'" in err.message


def test_call_to_unknown_plain_function(dsl_error):
    err = dsl_error("wgmma_fenc()")
    assert "unknown function 'wgmma_fenc'" in err.message
    assert err.hint.startswith("did you mean wgmma_fence(...)?")


def test_attribute_on_known_value(dsl_error):
    err = dsl_error("x = A.shape")
    assert err.body_line == 1 and "attribute access 'A.shape'" in err.message


def test_recursion(dsl_error):
    err = dsl_error("x = 1\nk(A, B, C)")
    assert err.body_line == 2 and "recursion" in err.message


def test_reassignment_is_rejected(dsl_error):
    err = dsl_error("x = 1\nx = 2")
    assert err.body_line == 2 and "single-assignment" in err.message
    assert "assign(" in err.hint


def test_tile_larger_than_tensor(dsl_error):
    err = dsl_error("""
        t = tile(X, (64, 64), (0, 0))
        u = tile(X, (64, 256), (0, 0))
    """, params='X: Tensor[128, 128, fp32]')
    assert (err.body_line, err.loc.col) == (2, 17)   # points at the box argument
    assert "larger than X (128, 128) in dimension 1 (256 > 128)" in err.message
    assert "at most the tensor's extent" in err.hint


def test_symbolic_tensor_tile_is_not_flagged(compile_body):
    compile_body("t = tile(A, (4096, 64), (0, 0))")


def test_wrong_shapes_wgmma_k(dsl_error):
    err = dsl_error("""
        a_s = smem(bf16, (64, 64))
        b_s = smem(bf16, (256, 32))
        acc = fragment(fp32, (64, 256), "wgmma_acc_m64n256")
        wgmma(acc, a_s[0], b_s[0])
    """)
    assert err.body_line == 4 and "wrong shapes: a is 64x64, b is 256x32" in err.message
    assert "same BK" in err.hint


def test_wrong_shapes_store(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        store(tile(C, (64, 128), (0, 0)), x)
    """)
    assert err.body_line == 2 and "shape mismatch: dst is (64, 128), src is (64, 64)" in err.message


def test_wrong_shapes_elementwise(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = load(tile(C, (64, 32), (0, 0)), "blocked")
        z = x + y
    """)
    assert err.body_line == 3 and "wrong shapes for add" in err.message


def test_barrier_waited_but_never_armed(dsl_error):
    err = dsl_error("""
        full = mbarrier(2)
        with elect_one("block"):
            mbarrier_init(full[0], 1)
        for k in range(8):
            wait(full[k % 2], (k // 2) & 1)
    """)
    assert (err.loc.file, err.body_line, err.loc.col) == ("kern.py", 5, 9)
    assert "barrier full is waited on but never armed" in err.message
    assert "arrive on full[s]" in err.hint


def test_barrier_armed_by_tma_is_fine(compile_body):
    compile_body("""
        full = mbarrier(1)
        a_s = smem(bf16, (64, 64))
        with elect_one("block"):
            mbarrier_init(full[0], 1)
        expect_tx(full[0], nbytes(a_s[0]))
        tma_load(a_s[0], tile(A, (64, 64), (0, 0)), full[0])
        wait(full[0], 0)
    """)


def test_barrier_never_initialised(dsl_error):
    err = dsl_error("""
        bar = mbarrier(1)
        arrive(bar[0])
        wait(bar[0], 0)
    """)
    assert err.body_line == 3 and "never initialised" in err.message


def test_syntax_error_has_location():
    with pytest.raises(DSLError) as info:
        parse_source("x = (\n", "bad.py")
    assert info.value.loc.file == "bad.py" and "syntax error" in info.value.message


def test_error_text_shows_source_line_and_caret(dsl_error):
    err = dsl_error("y = tile(Q, (64, 64), (0, 0))")
    text = str(err)
    assert text.startswith("kern.py:5:14: error: unknown name 'Q'")
    assert "    y = tile(Q, (64, 64), (0, 0))" in text
    assert text.splitlines()[2].index("^") == 4 + 13


MULTICAST_BODY = """
    a_s = smem(bf16, (64, 64))
    full = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(full[0], 1)
    expect_tx(full[0], nbytes(a_s[0]))
    tma_load(a_s[0], tile(A, (64, 64), (0, 0)), full[0], multicast=MASK)
    wait(full[0], 0)
"""


def test_multicast_without_a_cluster(dsl_error):
    err = dsl_error(MULTICAST_BODY.replace("MASK", "3"))
    assert (err.body_line, err.loc.col) == (6, 68)    # points at the mask
    assert "multicast TMA load needs a cluster of several blocks" in err.message
    assert "cluster=(2, 1, 1)" in err.hint


def test_multicast_mask_outside_the_cluster(dsl_error, compile_body):
    compile_body(MULTICAST_BODY.replace("MASK", "3"), cluster=(2, 1, 1))
    err = dsl_error(MULTICAST_BODY.replace("MASK", "4"), cluster=(2, 1, 1))
    assert err.body_line == 6 and "mask 0b100 names CTAs outside the cluster of 2" in err.message
    assert "multicast=3" in err.hint


REMOTE_BODY = """
    bar = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(bar[0], 1)
    arrive(bar[0], cta=CTA)
    wait(bar[0], 0)
"""


def test_remote_arrive_without_a_cluster(dsl_error):
    err = dsl_error(REMOTE_BODY.replace("CTA", "1"))
    assert err.body_line == 4 and "remote arrive (cta=) needs a cluster" in err.message


def test_remote_arrive_to_a_cta_outside_the_cluster(dsl_error, compile_body):
    compile_body(REMOTE_BODY.replace("CTA", "1 - cluster_rank()"), cluster=(2, 1, 1))
    err = dsl_error(REMOTE_BODY.replace("CTA", "2"), cluster=(2, 1, 1))
    assert err.body_line == 4 and "CTA 2 is not in the cluster of 2 blocks" in err.message
    assert "cta=1 - cluster_rank()" in err.hint


def test_f_string_of_constants_folds_and_of_runtime_values_is_refused(compile_body, dsl_error):
    compile_body('acc = fragment(fp32, (64, 128), f"wgmma_acc_m64n{N}")',
                 params='A: Tensor["M", "K", bf16], N: const = 128')
    err = dsl_error('b = block_id("x")\nx = load(tile(C, (64, 64), (0, 0)), f"blocked{b}")')
    assert err.body_line == 2 and "f-string in a kernel can only interpolate compile-time" \
        in err.message and "const" in err.hint


@pytest.mark.parametrize("body", [
    'a_s = smem(bf16, (64, 64))\nb_s = smem(bf16, (256, 64))\n'
    'acc = fragment(bf16, (64, 256), "wgmma_acc_m64n256")\nwgmma(acc, a_s[0], b_s[0])',
    'full = mbarrier(1)\nwait(full[0], "x")',
    'x = load(tile(C, (64, 64), (0, 0)), "blocked")\ny = cast(x, "int8")',
])
def test_every_rule_error_carries_a_hint(dsl_error, body):
    err = dsl_error(body)
    assert err.hint, str(err)


@pytest.mark.parametrize("body", ["x = 1 // 0", "x = 2 ** 3", "x = b'raw'", "x = 1 < 2 < 3",
                                  "x = -(1, 2)"])
def test_visitor_errors_carry_a_hint_too(dsl_error, body):
    err = dsl_error(body)
    assert err.body_line == 1 and err.hint, str(err)


def test_wrong_layouts_elementwise(dsl_error, compile_body):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        z = x + s
    """)
    assert err.body_line == 3 and "layout mismatch for add: blocked and wgmma_acc_m64n64" \
        in err.message and "convert_layout" in err.hint
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        z = x - row_max(s)
    """)
    assert err.body_line == 3 and "rows are not held by the threads of blocked" in err.message
    # the rows of any accumulator fit any accumulator (flash attention's m64n64 rows
    # rescale its m64n128 output), and rows(blocked) is held by every thread
    compile_body("""
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        o = load(tile(C, (64, 128), (0, 0)), "wgmma_acc_m64n128")
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        z = o * row_max(s)
        w = s - row_sum(x)
    """)


def test_assign_into_an_expression_value_is_refused_at_its_line():
    """assign() updates a fragment declared with fragment(...); an expression's value is not
    one (the mutation sweep found the frontend accepted it and only the interpreter failed)."""
    from pathlib import Path

    from argus.frontend import DSLError, parse_source

    src = (Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py").read_text()
    bad = src.replace("assign(m_i, m_new)", "assign(m_new, m_new)", 1)
    assert bad != src
    try:
        parse_source(bad, "fa.py")
    except DSLError as err:
        text = err.format()
    else:
        raise AssertionError("the frontend accepted assign into an expression value")
    line = next(i + 1 for i, l in enumerate(bad.splitlines()) if "assign(m_new, m_new)" in l)
    assert text.startswith(f"fa.py:{line}:") and "declared with fragment(...)" in text
