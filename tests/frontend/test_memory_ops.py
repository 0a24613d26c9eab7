"""Global tiles, smem buffers, fragments, gathers, scatters and atomics -> IR."""

PARAMS = 'X: Tensor["T", 128, bf16], I: Tensor["R", int32], Y: Tensor["T", 128, fp32]'


def test_gather_scatter_atomic(body_ops):
    ops = body_ops("""
        rows = load_indices(tile(I, (64,), (1,)))
        x = gather(X, rows, 1, 64, "blocked")
        y = cast(x, fp32)
        scatter(Y, rows, 1, y)
        atomic_add(tile(Y, (64, 64), (0, 1)), y)
        bar = mbarrier(1)
        with elect_one("block"):
            mbarrier_init(bar[0], 1)
        g = smem(bf16, (64, 64))
        gather_tma(g[0], X, rows, 0, bar[0])
    """, params=PARAMS)
    assert ops[:6] == [
        "%0 = tile %I, 1 {box=(64)} : gtile<int32>[64] of I",
        "%rows = indices.load %0 : indices[64]",
        "%x = gather.load %X, %rows, 1 {cols=64, layout=blocked} : frag<bf16>[64, 64, layout=blocked]",
        "%y = math.cast %x {dtype=fp32} : frag<fp32>[64, 64, layout=blocked]",
        "scatter.store %Y, %rows, 1, %y",
        "%4 = tile %Y, 0, 1 {box=(64, 64)} : gtile<fp32>[64, 64] of Y",
    ]
    assert ops[6] == "atomic.add %4, %y"
    assert ops[-1] == "gather.tma %8, %X, %rows, 0, %9"   # %8 = g[0], %9 = bar[0]


def test_gather_rows_must_fill_tile(dsl_error):
    err = dsl_error("""
        rows = load_indices(tile(I, (32,), (0,)))
        bar = mbarrier(1)
        g = smem(bf16, (64, 64))
        gather_tma(g[0], X, rows, 0, bar[0])
    """, params=PARAMS)
    assert err.body_line == 4 and "32 rows gathered into a tile of 64 rows" in err.message


def test_index_vectors_are_int32(dsl_error):
    err = dsl_error("r = load_indices(tile(Y, (64, 64), (0, 0)))", params=PARAMS)
    assert "1-D int32 tiles" in err.message


def test_assign_checks_layout(dsl_error):
    err = dsl_error("""
        a = fragment(fp32, (64, 64), "wgmma_acc_m64n64")
        b = load(tile(Y, (64, 64), (0, 0)), "blocked")
        assign(a, b)
    """, params=PARAMS)
    assert err.body_line == 3 and "layout mismatch" in err.message and "convert_layout" in err.hint


def test_smem_subtile_must_divide(dsl_error):
    err = dsl_error("""
        s = smem(bf16, (64, 64))
        t = tile(s[0], (48, 64), (0, 0))
    """, params=PARAMS)
    assert "does not divide the smem tile (64, 64)" in err.message


def test_tile_rank_must_match(dsl_error):
    err = dsl_error("t = tile(X, (64,), (0,))", params=PARAMS)
    assert "X has rank 2" in err.message


def test_widest_swizzle_is_the_widest_the_rows_fill(body_ops):
    ops = body_ops("""
        a = smem(bf16, (64, 64), swizzle="widest")
        b = smem(bf16, (64, 32), swizzle="widest")
        c = smem(bf16, (64, 16), swizzle="widest")
        d = smem(bf16, (64, 48), swizzle="widest")
        e = smem(bf16, (64, 4), swizzle="widest")
    """, params=PARAMS)
    swizzles = [op.split("swizzle=")[1].split("}")[0].split(",")[0] for op in ops]
    assert swizzles == ["128B", "64B", "32B", "32B", "none"]


def test_an_unknown_swizzle_names_the_choices(dsl_error):
    err = dsl_error('g = smem(bf16, (64, 64), swizzle="96B")', params=PARAMS)
    assert "widest" in err.message or "widest" in (err.hint or "")
