"""gather_cp_async -> IR: the warpgroup-collective row gather, and the misuses refused at
their line: inside elect_one (it must run on every thread of the warpgroup), outside a role,
a tile of another row count or dtype, and a tile the warpgroup cannot split into 16-byte
chunks."""

from argus.frontend import DSLError, parse_source

from .conftest import FILE, source

PARAMS = 'X: Tensor["T", "K", bf16], I: Tensor["R", int32], Y: Tensor["T", "K", fp32]'
RING = """
    x_s = smem(bf16, (128, 64), stages=2, swizzle="128B")
    full = mbarrier(2)
    with elect_one("block"):
        mbarrier_init(full[0], 128)
        mbarrier_init(full[1], 128)
    fence_mbarrier_init()
    sync_block()
    rows = load_indices(tile(I, (128,), (0,)))
"""


def test_the_producer_warpgroup_gathers(body_ops):
    ops = body_ops(RING + """
    with role("producer", warpgroups=(0,), regs=40):
        gather_cp_async(x_s[1], X, rows, 3, full[1])
    """, params=PARAMS)
    assert ops[-4:-1] == ["%6 = smem.stage %x_s, 1 : stile<bf16>[128, 64, swizzle=128B] of x_s",
                          "%7 = mbarrier.at %full, 1 : mbarrier of full",
                          "gather.cp_async %6, %X, %rows, 3, %7"]


def test_inside_elect_one_is_refused_at_its_line(dsl_error):
    err = dsl_error(RING + """
    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():
            gather_cp_async(x_s[0], X, rows, 0, full[0])
    """, params=PARAMS)
    assert err.loc.file == FILE and err.body_line == 12
    assert "every thread of the warpgroup" in err.message and "elect_one" in err.message
    assert "128 arrivals" in err.hint
    assert f"{FILE}:{err.loc.line}" in str(err)


def test_inside_an_elect_one_of_a_helper_is_refused_there():
    src = source(RING + """
    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():
            fill(x_s, X, rows, full)
    """, params=PARAMS).replace("@kernel", '''@helper
def fill(x_s, X, rows, full):
    gather_cp_async(x_s[0], X, rows, 0, full[0])


@kernel''')
    try:
        parse_source(src, FILE)
    except DSLError as err:
        assert "cannot run inside elect_one" in err.message
        assert src.splitlines()[err.loc.line - 1].strip().startswith("gather_cp_async(")
    else:
        raise AssertionError("gather_cp_async in a helper inlined inside elect_one parsed")


def test_outside_a_role_is_refused(dsl_error):
    err = dsl_error(RING + "    gather_cp_async(x_s[0], X, rows, 0, full[0])\n", params=PARAMS)
    assert err.body_line == 9 and "runs in a role" in err.message


def test_rows_and_dtype_must_match_the_tile(dsl_error):
    err = dsl_error(RING + """
    half = load_indices(tile(I, (64,), (0,)))
    with role("producer", warpgroups=(0,), regs=40):
        gather_cp_async(x_s[0], X, half, 0, full[0])
    """, params=PARAMS)
    assert err.body_line == 12 and "64 rows gathered into a tile of 128 rows" in err.message
    err = dsl_error(RING + """
    with role("producer", warpgroups=(0,), regs=40):
        gather_cp_async(x_s[0], Y, rows, 0, full[0])
    """, params=PARAMS)
    assert "Y is fp32, the tile is bf16" in err.message


def test_a_tile_the_warpgroup_cannot_split_is_refused(dsl_error):
    err = dsl_error("""
    x_s = smem(bf16, (8, 8))
    full = mbarrier(1)
    rows = load_indices(tile(I, (8,), (0,)))
    with role("producer", warpgroups=(0,), regs=40):
        gather_cp_async(x_s[0], X, rows, 0, full[0])
    """, params=PARAMS)
    assert err.body_line == 5 and "not a multiple of the warpgroup's 128 threads" in err.message
