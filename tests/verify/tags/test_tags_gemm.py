"""The repository's kernels under the tag pass: the GEMM (and a BN = 64 variant) and the
copy verify clean (flash attention: test_attention_edits.py, MoE: test_moe_examples.py);
single-edit variants of the GEMM are caught by the check they break."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend.parse import parse_kernel, parse_source
from argus.verify.tags import check

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
GEMM = (EXAMPLES / "gemm.py").read_text()


def gemm_variant(old: str, new: str):
    assert old in GEMM, old
    return parse_source(GEMM.replace(old, new), str(EXAMPLES / "gemm.py"))["gemm"]


def errors(findings):
    return [f for f in findings if f.severity == "error"]


def test_gemm_verifies_clean():
    assert check(parse_kernel(EXAMPLES / "gemm.py", "gemm")) == []


def test_copy_verifies_clean():
    assert check(parse_kernel(EXAMPLES / "copy.py", "copy")) == []


def test_gemm_with_64_wide_tiles_verifies_clean():
    k = parse_source(GEMM.replace("BN: const = 256", "BN: const = 64")
                     .replace('"wgmma_acc_m64n256"', '"wgmma_acc_m64n64"'), "g.py")["gemm"]
    assert check(k) == []


def test_accumulator_not_reset_per_tile():
    findings = errors(check(gemm_variant("            assign(acc, 0.0)\n", "            pass\n")))
    assert [f.check for f in findings][:1] == ["tag.wgmma-row"]
    cex = findings[0].counterexample
    assert cex.thread is not None and "tm" in cex.iteration


def test_k_not_a_multiple_of_bk_misses_k_values():
    (f, *_) = errors(check(gemm_variant("    assume(K % BK == 0)\n", "    pass\n")))
    assert f.check == "tag.k-coverage" and f.loc.line == 64
    assert f.counterexample.sizes["K"] % 64 != 0


def test_tma_load_completing_another_stages_barrier():
    (f, *_) = errors(check(gemm_variant(
        "tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])",
        "tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[(s + 1) % S])")))
    assert f.check == "tag.stage" and f.loc.line == 51 and f.op == "tma_load"


def test_consumer_stage_from_another_counter_than_the_producer():
    (f, *_) = errors(check(gemm_variant(
        "for k in range(KT):\n                g = i * KT + k\n                s = g % S\n"
        "                wait(full",
        "for k in range(KT):\n                g = k\n                s = g % S\n"
        "                wait(full")))
    assert f.check == "tag.stage" and f.loc.line == 64
    assert f.counterexample.iteration["i"] >= 1      # equal on a block's first tile


def test_schedules_that_differ_are_not_claimed_verified():
    findings = check(gemm_variant('"grouped", group=8):\n            assign',
                                  '"row_major"):\n            assign'))
    assert any(f.check == "tag.not-modelled" for f in findings)


def test_copy_blocks_writing_one_tile_race():
    src = (EXAMPLES / "copy.py").read_text()
    k = parse_source(src.replace("dst = tile(Y, (BM, BN), (tm, tn))",
                                 "dst = tile(Y, (BM, BN), (0, tn))"), "copy.py")["copy"]
    checks = {f.check for f in errors(check(k))}
    assert {"tag.store-race", "tag.store-coverage", "tag.assert"} <= checks
    race = next(f for f in check(k) if f.check == "tag.store-race")
    assert race.counterexample.block is not None


def variant(*edits):
    src = GEMM
    for old, new in edits:
        assert old in src, old
        src = src.replace(old, new)
    return parse_source(src, str(EXAMPLES / "gemm.py"))["gemm"]


def test_each_k_tile_loaded_twice_is_accumulated_twice():
    k = variant(("tile(A, (BM, BK), (tm, k))", "tile(A, (BM, BK), (tm, k // 2))"),
                ("tile(B, (BN, BK), (tn, k))", "tile(B, (BN, BK), (tn, k // 2))"))
    (f, *_) = errors(check(k))
    assert f.check == "tag.k-coverage" and "twice" in f.message and f.loc.line == 64


def test_b_rows_moving_with_k_break_the_column_invariant():
    (f, *_) = errors(check(variant(("tile(B, (BN, BK), (tn, k))",
                                    "tile(B, (BN, BK), (tn + k, k))"))))
    it = f.counterexample.iteration
    assert f.check == "tag.wgmma-col" and it["k"] != it["k (earlier)"]


def test_without_a_tag_assert_the_store_checks_coordinates_itself():
    k = variant(("            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == "
                 "coord(dst)[1])\n", "            pass\n"),
                ("(tm * 2 + wg, tn))", "(tm * 2 + 1 - wg, tn))"))
    (f, *_) = errors(check(k))
    assert f.check == "tag.store-coordinate" and f.loc.line == 72
    (e,) = f.counterexample.elements
    assert e.actual["row"] != e.expected["row"]


def test_a_rounded_up_tile_grid_with_guarded_stores_is_clean():
    """Stores drop what falls outside C and TMA fills zeros past K: tails need no code."""
    k = variant(("    assume(M % BM == 0)\n", "    pass\n"),
                ("for i, tm, tn in schedule(M // BM,", "for i, tm, tn in schedule((M + BM - 1) // BM,"))
    assert check(k) == []     # (both schedules are rounded up: replace() edits every one)


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_library_gemm_verifies_clean(name):
    """argus/kernels/gemm.py: tails in M, N and K, one wgmma in flight, B K x N for nn."""
    from argus.frontend import parse_file
    kernels = parse_file(Path(__file__).resolve().parents[3] / "argus" / "kernels" / "gemm.py")
    assert check(kernels[name]) == []


def test_accumulator_starting_from_one_is_caught_at_the_reset():
    (f, *_) = errors(check(variant(("assign(acc, 0.0)", "assign(acc, 1.0)"))))
    assert f.check == "tag.accumulator-init" and f.loc.line == 58


def test_a_smem_tile_outside_its_stage_is_caught():
    (f, *_) = errors(check(variant(("(64, BK), (wg, 0))", "(64, BK), (wg, 1))"))))
    assert f.check == "tag.smem-view" and f.loc.line == 64 and "columns 64..127" in f.message
