"""Device helpers (`@helper`): a module-level function inlined at parse time into the kernel
(or helper) that calls it. Inlining gives the IR of the same code written in place; the
helper has a scope of its own (its parameters and the module's constants); values come
back through a final `return`; ops inside it carry the helper's file:line; every misuse is
a DSLError at its line with a hint, and an error inside a helper names its call sites."""

import textwrap

import pytest

import argus.lang as lang
from argus.frontend import DSLError, parse_source
from argus.ir import format_kernel

FILE = "helpers.py"
HEAD = "from argus.lang import *\n\nN0 = 4\n\n"
KERNEL = '''
@kernel(grid=(1,), block=384)
def k(A: Tensor["M", "K", bf16], C: Tensor["M", "K", fp32], S: const = 2):
'''


def module(helpers: str, body: str) -> str:
    """A module: the helpers, then kernel k whose body is `body`."""
    return (HEAD + textwrap.dedent(helpers).strip("\n") + "\n\n" + KERNEL
            + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n")


def compile_module(src: str, name: str = "k", overrides=None):
    return parse_source(src, FILE, overrides)[name]


def error(src: str, overrides=None) -> DSLError:
    with pytest.raises(DSLError) as info:
        parse_source(src, FILE, overrides)
    return info.value


def line_of(src: str, text: str, nth: int = 0) -> int:
    """1-based line number of the nth line containing `text`."""
    return [i + 1 for i, line in enumerate(src.splitlines()) if text in line][nth]


RING = '''
@helper
def ring(S, count=2):
    """The barriers of an S-stage ring."""
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], count)
    fence_mbarrier_init()
    sync_block()
    return full, empty
'''
RING_INLINE = '''
full = mbarrier(S)
empty = mbarrier(S)
with elect_one("block"):
    for s in range(S):
        mbarrier_init(full[s], 1)
        mbarrier_init(empty[s], 2)
fence_mbarrier_init()
sync_block()
'''
COPY = '''
@helper
def copy_tile(src, dst, i, j):
    x = load(tile(src, (64, 64), (i, j)), "blocked")
    store(tile(dst, (64, 64), (i, j)), cast(x, fp32))
'''


# ---- inlining -------------------------------------------------------------------------------
def test_a_helper_gives_the_ir_of_its_body_written_in_place():
    with_helper = compile_module(module(RING + COPY, """
        full, empty = ring(S)
        copy_tile(A, C, 0, 1)
    """))
    inline = compile_module(module("", RING_INLINE + textwrap.dedent("""
        x = load(tile(A, (64, 64), (0, 1)), "blocked")
        store(tile(C, (64, 64), (0, 1)), cast(x, fp32))
    """)))
    assert format_kernel(with_helper) == format_kernel(inline)


def test_ops_inside_a_helper_carry_the_helpers_lines():
    src = module(RING + COPY, """
        full, empty = ring(S)
        copy_tile(A, C, 0, 1)
    """)
    ops = {}
    for op in compile_module(src).walk():
        ops.setdefault(op.opcode, op)       # the first of each kind
    assert ops["mbarrier.init"].loc.line == line_of(src, "mbarrier_init(full[s], 1)")
    assert ops["store"].loc.line == line_of(src, "store(tile(dst")
    assert ops["load"].loc.file == FILE


def test_each_call_inlines_the_body_again():
    kernel = compile_module(module(COPY, """
        copy_tile(A, C, 0, 0)
        copy_tile(A, C, 1, 0)
    """))
    stores = [op for op in kernel.walk() if op.opcode == "store"]
    assert len(stores) == 2 and stores[0].loc == stores[1].loc
    tiles = [op.operands[1:] for op in kernel.walk() if op.opcode == "tile"]
    assert tiles == [(0, 0), (0, 0), (1, 0), (1, 0)]


def test_keyword_arguments_and_defaults():
    src = module(RING, """
        full, empty = ring(count=3, S=S)
        f2, e2 = ring(1)
    """)
    inits = [op.attrs["arrivals"] for op in compile_module(src).walk()
             if op.opcode == "mbarrier.init"]
    assert inits == [1, 3, 1, 2]


def test_helpers_may_be_defined_after_the_kernel_and_take_a_docstring():
    src = module("", """
        copy_tile(A, C, 0, 0)
    """) + "\n\n" + textwrap.dedent(COPY)
    assert [op.opcode for op in compile_module(src).walk()].count("store") == 1


def test_helper_with_parentheses_and_positional_only_and_keyword_only_parameters():
    src = module('''
        @helper()
        def shifted(x, /, by, *, extra=0):
            return x + by + extra
    ''', """
        a = shifted(M, 2, extra=1)
        for i in range(shifted(1, by=1)):
            pass
    """)
    kernel = compile_module(src)
    loop = next(op for op in kernel.walk() if op.opcode == "for")
    assert loop.operands == (0, 2, 1)        # the compile-time result folded


# ---- scoping --------------------------------------------------------------------------------
def test_names_a_helper_binds_do_not_leak_into_the_caller():
    src = module(COPY, """
        copy_tile(A, C, 0, 0)
        y = cast(x, fp32)
    """)
    err = error(src)
    assert "unknown name 'x'" in err.message
    assert err.loc.line == line_of(src, "y = cast(x, fp32)")


def test_a_helper_does_not_see_its_callers_names():
    src = module('''
        @helper
        def uses_caller():
            store(tile(C, (64, 64), (0, 0)), y)
    ''', """
        y = cast(load(tile(A, (64, 64), (0, 0)), "blocked"), fp32)
        uses_caller()
    """)
    err = error(src)
    assert "unknown name 'C'" in err.message       # a kernel parameter, not the helper's
    assert err.loc.line == line_of(src, "store(tile(C")


def test_a_helper_does_not_see_the_kernels_const_parameters_or_symbols():
    src = module('''
        @helper
        def stages():
            return S
    ''', """
        n = stages()
    """)
    assert "unknown name 'S'" in error(src).message
    src = module('''
        @helper
        def rows():
            return M
    ''', """
        n = rows()
    """)
    assert "unknown name 'M'" in error(src).message


def test_a_helper_sees_module_constants_with_their_overrides():
    src = module('''
        @helper
        def loop():
            for i in range(N0):
                pass
    ''', "loop()")
    loops = lambda kernel: [op.operands for op in kernel.walk() if op.opcode == "for"]  # noqa
    assert loops(compile_module(src)) == [(0, 4, 1)]
    assert loops(compile_module(src, overrides={"N0": 6})) == [(0, 6, 1)]


def test_a_helper_may_reuse_its_callers_names():
    src = module('''
        @helper
        def half(x):
            y = cast(x, fp32)
            return y
    ''', """
        x = load(tile(A, (64, 64), (0, 0)), "blocked")
        y = half(x)
        z = half(x)
        store(tile(C, (64, 64), (0, 0)), z)
    """)
    names = [op.results[0].name for op in compile_module(src).walk()
             if op.opcode == "math.cast"]
    assert names == ["y", "y.1"]


def test_a_loop_variable_of_a_helper_is_its_own():
    src = module('''
        @helper
        def count(n):
            for i in range(n):
                pass
    ''', """
        for i in range(2):
            count(i)
    """)
    loops = [op for op in compile_module(src).walk() if op.opcode == "for"]
    assert len(loops) == 2


# ---- return values --------------------------------------------------------------------------
def test_a_returned_value_takes_the_callers_name():
    src = module('''
        @helper
        def as_fp32(x):
            return cast(x, fp32)
    ''', """
        x = load(tile(A, (64, 64), (0, 0)), "blocked")
        out = as_fp32(x)
        store(tile(C, (64, 64), (0, 0)), out)
    """)
    assert "%out = math.cast %x" in format_kernel(compile_module(src))


def test_a_helper_returns_a_tuple_and_compile_time_values():
    src = module('''
        @helper
        def pair(n):
            return n * 2, n + 1
    ''', """
        a, b = pair(3)
        for i in range(a):
            for j in range(b):
                pass
    """)
    loops = [op.operands for op in compile_module(src).walk() if op.opcode == "for"]
    assert loops == [(0, 6, 1), (0, 4, 1)]


def test_a_helper_that_returns_nothing_cannot_be_bound():
    src = module(COPY, "r = copy_tile(A, C, 0, 0)")
    err = error(src)
    assert "helper copy_tile returns no value" in err.message
    assert err.loc.line == line_of(src, "r = copy_tile")
    assert "return value" in err.hint


@pytest.mark.parametrize("where", ["if", "for", "early"])
def test_a_return_that_is_not_the_last_statement_is_an_error(where):
    body = {"if": "if N0 > 1:\n        return 1\n    return 2",
            "for": "for i in range(2):\n        return i\n    pass",
            "early": "return 1\n    pass"}[where]
    src = module(f'''
@helper
def early():
    {body}
''', "a = early()")
    err = error(src)
    assert "return in helper early is not its last statement" in err.message
    assert err.loc.line == line_of(src, "return", 0) and err.loc.file == FILE
    assert "one `return` at the end" in err.hint


# ---- nested helpers and diagnostics inside helpers ------------------------------------------
NESTED = '''
@helper
def inner(x):
    return cast(x, fp16)


@helper
def outer(src):
    x = load(tile(src, (64, 64), (0, 0)), "blocked")
    return inner(x)
'''


def test_a_helper_calls_a_helper():
    src = module(NESTED, """
        y = outer(A)
    """)
    assert "%y = math.cast %x {dtype=fp16}" in format_kernel(compile_module(src))


def test_an_error_inside_a_helper_is_at_the_helpers_line_with_a_note_per_call():
    src = module(NESTED.replace("cast(x, fp16)", "cast(x, fp99)"), """
        y = outer(A)
    """)
    err = error(src)
    assert (err.loc.file, err.loc.line) == (FILE, line_of(src, "cast(x, fp99)"))
    assert "unknown name 'fp99'" in err.message
    inner_call, outer_call = err.notes
    assert inner_call.loc.line == line_of(src, "return inner(x)")
    assert "in helper inner, inlined into helper outer" in inner_call.text
    assert outer_call.loc.line == line_of(src, "y = outer(A)")
    assert "in helper outer, inlined into kernel k" in outer_call.text
    text = err.format()
    assert f"{FILE}:{outer_call.loc.line}:9: note: in helper outer" in text
    assert "y = outer(A)" in text and "hint:" in text


def test_a_rule_error_inside_a_helper_names_the_call_site():
    src = module('''
        @helper
        def bad_store(dst, x):
            store(tile(dst, (64, 32), (0, 0)), x)
    ''', """
        x = cast(load(tile(A, (64, 64), (0, 0)), "blocked"), fp32)
        bad_store(C, x)
    """)
    err = error(src)
    assert err.loc.line == line_of(src, "store(tile(dst")
    assert [n.loc.line for n in err.notes] == [line_of(src, "bad_store(C, x)")]


def test_a_barrier_never_armed_inside_a_helper_is_reported_there():
    src = module('''
        @helper
        def stall(S):
            bars = mbarrier(S)
            with elect_one("block"):
                mbarrier_init(bars[0], 1)
            fence_mbarrier_init()
            sync_block()
            wait(bars[0], 0)
    ''', "stall(S)")
    err = error(src)
    assert "never armed" in err.message and err.loc.line == line_of(src, "wait(bars[0], 0)")


def test_a_role_and_a_schedule_inside_a_helper():
    src = module('''
        @helper
        def consumer(C, BM):
            with role("consumer", warpgroups=(1, 2), regs=232):
                for i, tm in schedule((M + BM - 1) // BM):
                    pass
    ''', """
        consumer(C, 64)
    """).replace("@helper\ndef consumer(C, BM)", "@helper\ndef consumer(C, BM, M)").replace(
        "consumer(C, 64)", "consumer(C, 64, M)")
    text = format_kernel(compile_module(src))
    assert "role consumer warpgroups=(1, 2) regs=232" in text
    assert "schedule tiles=((M + 64 - 1) // 64) order=row_major" in text


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call,words,hint", [
    ("ring(S, cuont=1)", "helper ring has no parameter 'cuont'", "did you mean count=...?"),
    ("ring()", "helper ring is missing argument 'S'", "its signature: ring(S, count=2)"),
    ("ring(S, 2, 3)", "helper ring takes 2 positional arguments but 3 were given",
     "its signature"),
    ("ring(S, S=2)", "helper ring got two values for parameter 'S'", "its signature"),
    ("ring(*S)", "*args is not supported", "explicitly"),
    ("ring(**S)", "**kwargs is not supported", "explicitly"),
])
def test_a_call_that_does_not_fit_the_signature(call, words, hint):
    src = module(RING, f"f, e = {call}")
    err = error(src)
    assert words in err.message and hint in err.hint
    assert err.loc.line == line_of(src, f"f, e = {call}")
    assert err.notes == ()       # the call is the kernel's own line: nothing inlined yet


def test_a_positional_only_parameter_passed_by_keyword():
    src = module('''
        @helper
        def f(x, /):
            return x
    ''', "a = f(x=1)")
    assert "parameter x of helper f is positional-only" in error(src).message


def test_a_default_must_be_a_compile_time_constant_of_the_module():
    src = module('''
        @helper
        def f(x=K):
            return x
    ''', "a = f()")
    err = error(src)
    assert "unknown name 'K'" in err.message and err.loc.line == line_of(src, "def f(x=K)")


def test_a_helper_used_as_a_value():
    src = module(COPY, "h = copy_tile")
    err = error(src)
    assert "copy_tile is a helper, not a value" in err.message
    assert "inlined where it is called" in err.hint and err.loc.col == 9


def test_a_helper_passed_as_an_argument():
    src = module(COPY + '''

@helper
def apply(f):
    f(A, C, 0, 0)
''', "apply(copy_tile)")
    assert "copy_tile is a helper, not a value" in error(src).message


def test_binding_the_name_of_a_helper():
    err = error(module(COPY, "copy_tile = 1"))
    assert "'copy_tile' is the name of a helper" in err.message


def test_calling_a_plain_python_function_keeps_its_error_and_says_how_to_fix_it():
    src = module('''
        def plain(x):
            return x
    ''', "a = plain(1)")
    err = error(src)
    assert "unknown function 'plain'" in err.message
    assert "mark it @helper" in err.hint and err.loc.line == line_of(src, "a = plain(1)")


def test_calling_another_kernel():
    src = module("", "other(A)") + '''

@kernel(grid=(1,), block=128)
def other(A: Tensor["M", "K", bf16]):
    pass
'''
    err = error(src)
    assert "kernel other cannot be called from a kernel" in err.message and "@helper" in err.hint


def test_a_helper_calling_the_kernel():
    src = module('''
        @helper
        def launch_again():
            k(A, C)
    ''', "launch_again()")
    assert "kernel k cannot be called from a kernel" in error(src).message


def test_a_fragment_passed_to_a_helper_is_the_callers():
    src = module('''
        @helper
        def reset(acc):
            assign(acc, 0.0)
    ''', """
        acc = fragment(fp32, (64, 64), "blocked", init=1.0)
        reset(acc)
        store(tile(C, (64, 64), (0, 0)), acc)
    """)
    ops = list(compile_module(src).walk())
    (assign,) = [op for op in ops if op.opcode == "frag.assign"]
    (store,) = [op for op in ops if op.opcode == "store"]
    assert assign.operands[0] is store.operands[1]


def test_direct_recursion():
    src = module('''
        @helper
        def again(n):
            again(n)
    ''', "again(1)")
    err = error(src)
    assert "recursion: helper again calls itself" in err.message
    assert err.loc.line == line_of(src, "    again(n)") and "loop" in err.hint


def test_mutual_recursion():
    src = module('''
        @helper
        def ping(n):
            pong(n)


        @helper
        def pong(n):
            ping(n)
    ''', "ping(1)")
    err = error(src)
    assert "recursion: helpers call each other (ping -> pong -> ping)" in err.message
    assert err.loc.line == line_of(src, "    ping(n)")
    assert [n.text.split(",")[0] for n in err.notes] == ["in helper pong", "in helper ping"]


@pytest.mark.parametrize("definition,words", [
    ("@helper\ndef f(*xs):\n    pass", "helper f takes *args or **kwargs"),
    ("@helper\ndef f(**kw):\n    pass", "helper f takes *args or **kwargs"),
    ("@helper(inline=True)\ndef f():\n    pass", "helper takes no arguments"),
    ("@helper\n@kernel(grid=(1,))\ndef f():\n    pass", "f is marked both @kernel and @helper"),
    ("@helper\n@staticmethod\ndef f():\n    pass", "helper f has another decorator"),
    ("@helper\ndef tile(x):\n    pass", "helper tile has the name of an Argus surface function"),
    ("@helper\ndef N0():\n    pass", "helper N0 has the name of a module constant"),
    ("@helper\ndef f():\n    pass\n\n\n@helper\ndef f():\n    pass", "helper f is defined twice"),
    ("@helper\ndef k():\n    pass", "helper k has the name of a kernel"),
    ("@helper\nasync def f():\n    pass", "helper f is an async def"),
    ("@helper\ndef f(g):\n    pass\n\n\n@helper\ndef g():\n    pass",
     "parameter g of helper f has the name of a helper"),
])
def test_bad_helper_definitions(definition, words):
    err = error(module(definition, "pass"))
    assert words in err.message and err.hint and err.loc.file == FILE
    assert err.loc.line > HEAD.count("\n")


def test_a_nested_def_in_a_kernel_points_at_helper():
    err = error(module("", "def local():\n    pass"))
    assert "function" in err.message and "@helper" in err.hint


def test_calling_a_helper_from_python_is_explained():
    @lang.helper
    def f(x):
        return x
    assert isinstance(f, lang.HelperDef) and f.name == "f"
    with pytest.raises(TypeError, match="only has meaning inside an @argus.kernel body"):
        f(1)


def test_errors_are_dsl_errors_never_tracebacks():
    """Every error above formats to `file:line:col: error:` with a hint."""
    src = module(NESTED.replace("return inner(x)", "return inner(x, 1)"), "y = outer(A)")
    err = error(src)
    assert err.format().startswith(f"{FILE}:{line_of(src, 'return inner(x, 1)')}:")
    assert "takes 1 positional argument but 2 were given" in err.message
