"""scatter() into a 1-D tensor: the fragment must be 1-D and there is no column tile."""

PARAMS = 'I: Tensor[64, int32], Y: Tensor["R", fp32], Z: Tensor["R", 64, fp32]'


def test_1d_scatter_to_ir(body_ops):
    ops = body_ops("""
        rows = load_indices(tile(I, (64,), (0,)))
        v = load(tile(Y, (64,), (0,)), "rows(blocked)")
        scatter(Y, rows, 0, v)
    """, params=PARAMS)
    assert ops[-1] == "scatter.store %Y, %rows, 0, %v"


def test_2d_fragment_into_a_1d_tensor(dsl_error):
    err = dsl_error("""
        rows = load_indices(tile(I, (64,), (0,)))
        v = load(tile(Z, (64, 64), (0, 0)), "blocked")
        scatter(Y, rows, 0, v)
    """, params=PARAMS)
    assert err.body_line == 3 and "a 2-D fragment scattered into the 1-D Y" in err.message
    assert "one element per index" in err.hint


def test_1d_scatter_with_a_column_tile(dsl_error):
    err = dsl_error("""
        rows = load_indices(tile(I, (64,), (0,)))
        v = load(tile(Y, (64,), (0,)), "rows(blocked)")
        scatter(Y, rows, 1, v)
    """, params=PARAMS)
    assert err.body_line == 3 and "a 1-D scatter has no column tile, got the constant 1" \
        in err.message and err.hint == "pass col=0"
