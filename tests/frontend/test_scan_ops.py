"""The scan family -> IR (element, round_up, segment, tiles of a segment), and each misuse
reported at the user's line with a hint."""

PARAMS = ('X: Tensor["T", "K", bf16], C: Tensor[8, int32], Y: Tensor["T", "N", bf16], '
          'S: Tensor[16, 64, bf16]')


def test_routing_ops_to_ir(body_ops):
    ops = body_ops("""
        cnt = load_indices(tile(C, (8,), (0,)))
        offs = prefix_sum(round_up(cnt, 128))
        e = block_id("x")
        x_e = segment(X, element(offs, e), element(cnt, e))
        t = tile(x_e, (128, 64), (1, 0))
    """, params=PARAMS)
    assert ops == [
        "%0 = tile %C, 0 {box=(8)} : gtile<int32>[8] of C",
        "%cnt = indices.load %0 : indices[8]",
        "%2 = indices.round_up %cnt {multiple=128} : indices[8]",
        "%offs = scan.prefix_sum %2 : indices[8]",
        "%e = block_id {axis=x} : index",
        "%5 = indices.element %offs, %e : index",
        "%6 = indices.element %cnt, %e : index",
        "%x_e = segment %X, %5, %6 : global<bf16>[?, K]",
        "%t = tile %x_e, 1, 0 {box=(128, 64)} : gtile<bf16>[128, 64] of x_e",
    ]


def test_element_of_a_2d_fragment_says_what_it_takes(dsl_error):
    err = dsl_error("""
        f = load(tile(Y, (64, 64), (0, 0)), "blocked")
        n = element(f, 0)
    """, params=PARAMS)
    assert err.body_line == 2 and str(err).startswith(f"kern.py:{err.loc.line}:")
    assert "n = element(f, 0)" in str(err) and "hint:" in str(err)
    assert "element: needs a 1-D int32 fragment, got frag<bf16>[64, 64" in err.message
    assert "cast(x, int32)" in err.hint


def test_element_of_a_constant_says_to_use_an_index_vector(dsl_error):
    err = dsl_error("n = element(3, 0)", params=PARAMS)
    assert err.body_line == 1
    assert "element: argument v must be an index vector, got the constant 3" in err.message
    assert "load_indices" in err.hint


def test_round_up_of_a_fragment_points_at_index_vectors(dsl_error):
    err = dsl_error("""
        f = load(tile(C, (8,), (0,)), "blocked")
        r = round_up(f, 128)
    """, params=PARAMS)
    assert err.body_line == 2 and "argument v must be an index vector" in err.message
    assert "load_indices(...) a 1-D int32 tile" in err.hint


def test_element_and_to_indices_of_int32_fragments(body_ops):
    ops = body_ops("""
        f = load(tile(C, (8,), (0,)), "rows(blocked)")
        n = element(f, 7)
        v = to_indices(f)
    """, params=PARAMS)
    assert ops[-2:] == ["%n = indices.element %f, 7 : index",
                        "%v = indices.from_frag %f : indices[8]"]


def test_to_indices_needs_int32(dsl_error):
    err = dsl_error("""
        f = load(tile(Y, (64, 64), (0, 0)), "blocked")
        v = to_indices(row_sum(f))
    """, params=PARAMS)
    assert err.body_line == 2 and "to_indices: needs a 1-D int32 fragment, got frag<bf16>[64"\
        in err.message


def test_element_index_out_of_range(dsl_error):
    err = dsl_error("""
        cnt = load_indices(tile(C, (8,), (0,)))
        n = element(cnt, 8)
    """, params=PARAMS)
    assert err.body_line == 2
    assert "index 8 is out of range" in err.message and "8 entries" in err.message
    assert err.hint == "use 0..7"


def test_round_up_needs_a_positive_compile_time_multiple(dsl_error):
    err = dsl_error("""
        cnt = load_indices(tile(C, (8,), (0,)))
        e = block_id("x")
        r = round_up(cnt, e)
    """, params=PARAMS)
    assert err.body_line == 3 and "argument multiple must be a compile-time integer" in err.message
    err = dsl_error("""
        cnt = load_indices(tile(C, (8,), (0,)))
        r = round_up(cnt, 0)
    """, params=PARAMS)
    assert err.body_line == 2 and "argument multiple must be >= 1, got 0" in err.message


def test_segment_of_shared_memory_is_refused(dsl_error):
    err = dsl_error("""
        buf = smem(bf16, (128, 64), stages=2)
        s = segment(buf[0], 0, 64)
    """, params=PARAMS)
    assert err.body_line == 2 and "segment: can take rows of a global tensor" in err.message
    assert "Tensor[" in err.hint


def test_segment_with_negative_start(dsl_error):
    err = dsl_error("s = segment(X, -1, 4)", params=PARAMS)
    assert err.body_line == 1 and "start must be >= 0, got -1" in err.message


def test_segment_past_a_static_tensor(dsl_error):
    err = dsl_error("s = segment(S, 10, 7)", params=PARAMS)
    assert err.body_line == 1
    assert "rows [10, 17) are outside S, which has 16 rows" in err.message


def test_prefix_sum_of_a_2d_fragment(dsl_error):
    err = dsl_error("""
        f = load(tile(Y, (64, 64), (0, 0)), "blocked")
        p = prefix_sum(f)
    """, params=PARAMS)
    assert err.body_line == 2 and "prefix_sum takes a 1-D fragment" in err.message


def test_tile_of_a_segment_keeps_the_static_checks(dsl_error):
    err = dsl_error("""
        s = segment(X, 0, 4)
        t = tile(s, (128, 64, 1), (0, 0))
    """, params=PARAMS)
    assert err.body_line == 2 and "has rank 2" in err.message
