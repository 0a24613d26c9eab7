"""TMA and mbarrier surface -> IR."""


def test_tma_ring_ops(body_ops):
    ops = body_ops("""
        a_s = smem(bf16, (64, 64), stages=2, swizzle="128B")
        bar = mbarrier(2)
        with elect_one("block"):
            mbarrier_init(bar[1], 1)
        fence_mbarrier_init()
        expect_tx(bar[1], nbytes(a_s[1]))
        tma_load(a_s[1], tile(A, (64, 64), (2, 3)), bar[1], multicast=3)
        wait(bar[1], 0)
        arrive(bar[1], cta=1)
        fence_proxy_async()
        tma_store(tile(A, (64, 64), (0, 1)), a_s[0])
        tma_store_commit()
        tma_store_wait(1)
    """, cluster=(2, 1, 1))
    assert ops == [
        "%a_s = smem.alloc {dtype=bf16, shape=(64, 64), stages=2, swizzle=128B} : "
        "smem<bf16>[2 x 64, 64, swizzle=128B]",
        "%bar = mbarrier.alloc {count=2} : mbarrier[2]",
        "elect_one {scope=block} {",
        "%2 = mbarrier.at %bar, 1 : mbarrier of bar",
        "mbarrier.init %2 {arrivals=1}",
        "}",
        "fence.mbarrier_init",
        "%3 = mbarrier.at %bar, 1 : mbarrier of bar",
        "%4 = smem.stage %a_s, 1 : stile<bf16>[64, 64, swizzle=128B] of a_s",
        "mbarrier.expect_tx %3, 8192",   # 64 * 64 * 2 bytes
        "%5 = smem.stage %a_s, 1 : stile<bf16>[64, 64, swizzle=128B] of a_s",
        "%6 = tile %A, 2, 3 {box=(64, 64)} : gtile<bf16>[64, 64] of A",
        "%7 = mbarrier.at %bar, 1 : mbarrier of bar",
        "tma.load %5, %6, %7, 3",
        "%8 = mbarrier.at %bar, 1 : mbarrier of bar",
        "mbarrier.wait %8, 0",
        "%9 = mbarrier.at %bar, 1 : mbarrier of bar",
        "mbarrier.arrive %9, 1",
        "fence.proxy_async",
        "%10 = tile %A, 0, 1 {box=(64, 64)} : gtile<bf16>[64, 64] of A",
        "%11 = smem.stage %a_s, 0 : stile<bf16>[64, 64, swizzle=128B] of a_s",
        "tma.store %10, %11",
        "tma.store_commit",
        "tma.store_wait {pending=1}",
    ]


def test_tma_box_must_match_smem_tile(dsl_error):
    err = dsl_error("""
        a_s = smem(bf16, (64, 64))
        bar = mbarrier(1)
        tma_load(a_s[0], tile(A, (128, 64), (0, 0)), bar[0])
    """)
    assert err.body_line == 3 and "shape mismatch: dst is (64, 64), src is (128, 64)" in err.message


def test_tma_dtype_mismatch(dsl_error):
    err = dsl_error("""
        c_s = smem(fp32, (64, 64))
        bar = mbarrier(1)
        tma_load(c_s[0], tile(A, (64, 64), (0, 0)), bar[0])
    """)
    assert "dtype mismatch: dst is fp32, src is bf16" in err.message


def test_barrier_array_needs_an_index(dsl_error):
    err = dsl_error("bar = mbarrier(2)\narrive(bar)")
    assert err.body_line == 2 and "array of 2 mbarriers" in err.message and err.hint == "pass bar[s]"


def test_static_stage_out_of_range(dsl_error):
    err = dsl_error("bar = mbarrier(2)\narrive(bar[2])")
    assert err.body_line == 2 and "out of range: bar has 2 entries" in err.message


def test_parity_must_be_zero_or_one(dsl_error):
    err = dsl_error("bar = mbarrier(1)\narrive(bar[0])\nwait(bar[0], 2)")
    assert err.body_line == 3 and "parity is 0 or 1" in err.message


def test_swizzle_needs_whole_rows(dsl_error):
    err = dsl_error('a_s = smem(bf16, (64, 32), swizzle="128B")')
    assert "rows of a multiple of 128 bytes" in err.message and "64 elements per row" in err.hint
