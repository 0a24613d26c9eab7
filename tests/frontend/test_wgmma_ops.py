"""wgmma and ldmatrix/stmatrix surface -> IR, and their shape rules."""

WGMMA_BODY = """
    a_s = smem(bf16, (128, 64), swizzle="128B")
    b_s = smem(bf16, (256, 64), swizzle="128B")
    acc = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=0.0)
    wgmma_fence()
    wgmma(acc, tile(a_s[0], (64, 64), (1, 0)), b_s[0])
    wgmma_commit()
    wgmma_wait(1)
"""


def test_wgmma_from_smem(body_ops):
    ops = body_ops(WGMMA_BODY)
    assert ops[2:] == [
        "%acc = frag.alloc {dtype=fp32, init=0.0, layout=wgmma_acc_m64n256, shape=(64, 256)} : "
        "frag<fp32>[64, 256, layout=wgmma_acc_m64n256]",
        "wgmma.fence",
        "%3 = smem.stage %a_s, 0 : stile<bf16>[128, 64, swizzle=128B] of a_s",
        "%4 = smem.tile %3, 1, 0 {box=(64, 64)} : stile<bf16>[64, 64, swizzle=128B] of a_s",
        "%5 = smem.stage %b_s, 0 : stile<bf16>[256, 64, swizzle=128B] of b_s",
        "wgmma.mma %acc, %4, %5 {b_major=k, k=64, m=64, n=256}",
        "wgmma.commit",
        "wgmma.wait {pending=1}",
    ]


def test_wgmma_from_registers(body_ops):
    ops = body_ops("""
        b_s = smem(bf16, (64, 64))
        p = load(tile(A, (64, 64), (0, 0)), "wgmma_a_rs_16bit")
        acc = fragment(fp32, (64, 64), "wgmma_acc_m64n64")
        wgmma(acc, p, b_s[0])
    """)
    assert ops[-1] == "wgmma.mma %acc, %p, %4 {b_major=k, k=64, m=64, n=64}"


def test_wgmma_register_operand_needs_rs_layout(dsl_error):
    err = dsl_error("""
        b_s = smem(bf16, (64, 64))
        p = load(tile(A, (64, 64), (0, 0)), "blocked")
        acc = fragment(fp32, (64, 64), "wgmma_acc_m64n64")
        wgmma(acc, p, b_s[0])
    """)
    assert err.body_line == 4 and "wgmma_a_rs_* layout" in err.message


def test_wgmma_a_must_be_64_rows(dsl_error):
    err = dsl_error("""
        a_s = smem(bf16, (128, 64))
        b_s = smem(bf16, (256, 64))
        acc = fragment(fp32, (64, 256), "wgmma_acc_m64n256")
        wgmma(acc, a_s[0], b_s[0])
    """)
    assert err.body_line == 4 and "one wgmma covers 64 rows" in err.message
    assert "tile a by warpgroup" in err.hint


def test_wgmma_accumulator_shape(dsl_error):
    err = dsl_error("""
        a_s = smem(bf16, (64, 64))
        b_s = smem(bf16, (128, 64))
        acc = fragment(fp32, (64, 256), "wgmma_acc_m64n256")
        wgmma(acc, a_s[0], b_s[0])
    """)
    assert "accumulator is (64, 256), a x b^T is (64, 128)" in err.message


def test_ldmatrix_stmatrix(body_ops):
    ops = body_ops("""
        t = smem(bf16, (16, 16))
        r = ldmatrix(t[0], num=4)
        stmatrix(t[0], r, num=4, trans=True)
    """)
    assert ops[2] == "%r = ldmatrix %1 {num=4, trans=False} : frag<bf16>[16, 16, layout=ldmatrix_x4]"
    assert ops[4] == "stmatrix %3, %r {num=4, trans=True}"


def test_ldmatrix_count_must_cover_tile(dsl_error):
    err = dsl_error("t = smem(bf16, (16, 16))\nr = ldmatrix(t[0], num=2)")
    assert err.body_line == 2 and "2 8x8 matrices are 128 elements" in err.message
