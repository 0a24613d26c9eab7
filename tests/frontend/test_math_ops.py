"""Elementwise math, reductions, coordinates and conversions -> IR."""


def test_softmax_pieces(body_ops):
    ops = body_ops("""
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        m = row_max(s)
        p = exp2(s - m)
        l = row_sum(p)
        mask = col_of(s) <= row_of(s)
        q = select(mask, p, -inf)
        h = cast(q * 0.5, bf16)
    """)
    frag = "frag<fp32>[64, 64, layout=wgmma_acc_m64n64]"
    rows = "frag<fp32>[64, layout=rows(wgmma_acc_m64n64)]"
    assert ops == [
        "%0 = tile %C, 0, 0 {box=(64, 64)} : gtile<fp32>[64, 64] of C",
        f"%s = load %0 {{layout=wgmma_acc_m64n64}} : {frag}",
        f"%m = reduce.row %s {{kind=max}} : {rows}",
        f"%3 = math.sub %s, %m : {frag}",
        f"%p = math.exp2 %3 : {frag}",
        f"%l = reduce.row %p {{kind=sum}} : {rows}",
        "%6 = frag.coord %s {axis=1} : frag<int32>[64, 64, layout=wgmma_acc_m64n64]",
        "%7 = frag.coord %s {axis=0} : frag<int32>[64, 64, layout=wgmma_acc_m64n64]",
        "%mask = math.cmp %6, %7 {pred=le} : frag<pred>[64, 64, layout=wgmma_acc_m64n64]",
        f"%q = math.select %mask, %p, -inf : {frag}",
        f"%10 = math.mul %q, 0.5 : {frag}",
        "%h = math.cast %10 {dtype=bf16} : frag<bf16>[64, 64, layout=wgmma_acc_m64n64]",
    ]


def test_prefix_sum_and_convert(body_ops):
    ops = body_ops("""
        ids = load_indices(tile(I, (128,), (0,)))
        off = prefix_sum(ids)
        x = load(tile(A, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        y = convert_layout(x, "wgmma_a_rs_16bit")
    """, params='A: Tensor["M", "K", bf16], I: Tensor["T", int32]')
    assert ops[1:3] == ["%ids = indices.load %0 : indices[128]",
                        "%off = scan.prefix_sum %ids : indices[128]"]
    assert ops[-1] == ("%y = frag.convert %x {layout=wgmma_a_rs_16bit} : "
                       "frag<bf16>[64, 64, layout=wgmma_a_rs_16bit]")


def test_dtype_mismatch_in_math(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = load(tile(A, (64, 64), (0, 0)), "blocked")
        z = maximum(x, y)
    """)
    assert err.body_line == 3 and "dtype mismatch for max: bf16 and fp32" in err.message


def test_unknown_layout(dsl_error):
    err = dsl_error('x = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n999")')
    assert "unknown fragment layout 'wgmma_acc_m64n999'" in err.message and "known:" in err.hint


def test_layout_shape_must_fit_atom(dsl_error):
    err = dsl_error('x = fragment(fp32, (64, 128), "wgmma_acc_m64n256")')
    assert "covers 64x256 tiles; shape (64, 128) is not a multiple" in err.message


def test_select_needs_predicate(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = select(x, x, 0.0)
    """)
    assert err.body_line == 2 and "predicate fragment" in err.message
