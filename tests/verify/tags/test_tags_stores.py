"""Stores into shared memory, TMA stores and atomic adds under the tag pass: the library's
epilogue and split-K GEMMs verify with no finding; the byte conventions the checks rely on
agree with the code generator and the TMA box image on concrete ints; single-edit variants
are caught by the check they break, and what is not modelled says so."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import z3

from argus.codegen.smem_tiles import stage_geometry
from argus.frontend.parse import parse_file, parse_source
from argus.layout.hopper.tma import TmaBox
from argus.layout.swizzle import hopper_swizzle
from argus.verify.smt import Context
from argus.verify.tags import check, witness
from argus.verify.tags.smem_store import store_byte, writes_its_elements
from argus.verify.tags.tma import StageLayout
from argus.verify.tags.tma_store import reads_its_elements, tma_byte

KERNELS = Path(__file__).resolve().parents[3] / "argus" / "kernels"
GEMM = (KERNELS / "gemm.py").read_text()
SMEM_TMA = {"EPILOGUE": "smem_tma", "S": 3}     # gemm.py's TMA-store epilogue
SPLITK = (KERNELS / "gemm_splitk.py").read_text()


def errors(findings):
    return [f for f in findings if f.severity == "error"]


@pytest.mark.parametrize("module,name,overrides", [
    ("gemm", "gemm_nt", SMEM_TMA), ("gemm", "gemm_nn", SMEM_TMA),
    ("gemm_splitk", "gemm_nt_splitk", None), ("gemm_splitk", "gemm_nn_splitk", None)])
def test_library_variants_verify_with_no_finding(module, name, overrides):
    assert check(parse_file(KERNELS / f"{module}.py", overrides)[name]) == []


@pytest.mark.parametrize("split", [1, 3])
def test_split_k_verifies_for_other_split_counts(split):
    assert check(parse_file(KERNELS / "gemm_splitk.py", {"SPLIT": split})["gemm_nt_splitk"]) == []


# -- the byte conventions, on ints -------------------------------------------------------------
SHAPES = [((128, 256), 2, "128B"), ((64, 128), 2, "64B"), ((64, 64), 2, "32B"),
          ((128, 64), 4, "128B")]


def _ints(term, **values):
    subs = [(z3.BitVec(k, 64), z3.BitVecVal(v, 64)) for k, v in values.items()]
    return z3.simplify(z3.substitute(term, *subs)).as_long()


@pytest.mark.parametrize("shape,eb,swizzle", SHAPES)
def test_the_store_byte_is_the_code_generators_st_shared_address(shape, eb, swizzle):
    stage = StageLayout(shape[0], shape[1], eb, swizzle)
    g = stage_geometry(shape, eb, swizzle)
    r, c = z3.BitVecs("r c", 64)
    term = store_byte(stage, r, c)
    mask = ((1 << {"32B": 1, "64B": 2, "128B": 3}[swizzle]) - 1) << 4
    for row, col in itertools.product(range(0, shape[0], 13), range(0, shape[1], 7)):
        off = g.byte_offset(row, col)                        # what memory.py emits
        assert _ints(term, r=row, c=col) == off ^ ((off >> 3) & mask)


@pytest.mark.parametrize("shape,eb,swizzle", SHAPES)
def test_the_tma_image_reads_each_element_where_the_store_wrote_it(shape, eb, swizzle):
    stage = StageLayout(shape[0], shape[1], eb, swizzle)
    rows = shape[0] // 2                                    # a band: the lower half
    pr, pc = z3.BitVecs("pr pc", 64)
    term = tma_byte(stage, (rows, 0), (rows, shape[1]), pr, pc)
    w = stage.chunk_cols
    box = TmaBox(eb, (w, rows), (eb, w * eb), (w, rows), swizzle)
    for row, col in itertools.product(range(0, rows, 5), range(0, shape[1], 11)):
        j = col // w
        image = box.smem_image()
        expect = hopper_swizzle(swizzle)(j * stage.chunk_stride + rows * stage.span
                                         + image.layout((col % w, row)))
        got = _ints(term, pr=row, pc=col)
        assert got == expect
        assert got == _ints(store_byte(stage, z3.BitVecVal(rows + row, 64),
                                       z3.BitVecVal(col, 64)))
    assert reads_its_elements(stage, (rows, 0), (rows, shape[1])) == ""
    assert writes_its_elements(stage, (rows, 0), (rows, shape[1]))


def test_a_view_that_does_not_start_on_a_chunk_is_not_claimed():
    stage = StageLayout(128, 256, 2, "128B")
    why = reads_its_elements(stage, (0, 32), (128, 64))
    assert "chunks" in why


# -- single-edit variants of the epilogue ------------------------------------------------------
def _nested(text):
    """An edit written at the epilogue's own indentation, moved under gemm.py's
    `if EPILOGUE == "smem_tma":` (four more spaces on every indented line)."""
    return "".join("    " + line if line.startswith(" ") else line
                   for line in text.splitlines(keepends=True))


def epilogue(*edits, name="gemm_nt"):
    src = GEMM
    for old, new in edits:
        old, new = _nested(old), _nested(new)
        assert old in src, old
        src = src.replace(old, new)             # in both kernels
    return parse_source(src, str(KERNELS / "gemm.py"), SMEM_TMA)[name]


COPY = '''            if wg == 0:
                with elect_one():
                    tma_store(tile(C, (BM, BN), (tm, tn)), c_s[0])
                    tma_store_commit()
'''


def test_a_tma_store_issued_by_every_thread_races():
    k = epilogue((COPY, '''            if wg == 0:
                tma_store(tile(C, (BM, BN), (tm, tn)), c_s[0])
                with elect_one():
                    tma_store_commit()
'''))
    race = [f for f in errors(check(k)) if f.check == "tag.store-race"]
    assert race and "elect_one" in race[0].hint
    assert "issuer" in race[0].message


def test_a_tma_store_by_both_warpgroups_races():
    k = epilogue((COPY, '''            with elect_one():
                tma_store(tile(C, (BM, BN), (tm, tn)), c_s[0])
                tma_store_commit()
'''))
    race = [f for f in errors(check(k)) if f.check == "tag.store-race"]
    assert race and race[0].op == "tma_store"
    (e,) = race[0].counterexample.elements
    assert e.actual["second writer"]["warpgroup"] != race[0].counterexample.warpgroup


def test_a_store_only_one_warpgroup_makes_leaves_rows_unwritten():
    k = epilogue(("            store(tile(c_s[0], (64, BN), (wg, 0)), out)\n",
                  "            if wg == 0:\n"
                  "                store(tile(c_s[0], (64, BN), (wg, 0)), out)\n"))
    (f,) = [f for f in errors(check(k)) if f.check == "tag.smem-unwritten"]
    (e,) = f.counterexample.elements
    assert e.index[0] >= 64 and "no store of this tile" in f.message
    assert f.counterexample.smem_byte is not None


def test_a_tma_store_with_no_store_before_it():
    k = epilogue(("            store(tile(c_s[0], (64, BN), (wg, 0)), out)\n", ""))
    (f,) = [f for f in errors(check(k)) if f.check == "tag.smem-unwritten"]
    assert "no store into c_s" in f.message


def test_two_stores_of_one_warpgroup_are_ordered_across_two_a_race():
    """A warpgroup storing its rows twice is ordered (the later store wins): no finding;
    rows that the two warpgroups both write in one tile are a race."""
    twice = "            store(tile(c_s[0], (64, BN), (wg, 0)), out)\n"
    k = epilogue((twice, twice + twice))
    assert check(k) == []
    k = epilogue((twice, "            store(tile(c_s[0], (64, BN), (1 - wg, 0)), out)\n" + twice))
    assert [f.check for f in errors(check(k))] == ["tag.smem-race"]


def test_a_store_in_another_loop_is_not_claimed():
    k = epilogue(("            store(tile(c_s[0], (64, BN), (wg, 0)), out)\n",
                  "            for r in range(1):\n"
                  "                store(tile(c_s[0], (64, BN), (wg + r, 0)), out)\n"))
    findings = check(k)
    assert not errors(findings)
    assert any(f.check == "tag.not-modelled" and "other loops" in f.message for f in findings)


def test_the_nn_epilogue_catches_a_wrong_destination_too():
    k = epilogue(("tma_store(tile(C, (BM, BN), (tm, tn)), c_s[0])",
                  "tma_store(tile(C, (BM, BN), (tm, tn + 1)), c_s[0])"),
                 name="gemm_nn")
    assert "tag.store-coordinate" in {f.check for f in errors(check(k))}


# -- split-K -----------------------------------------------------------------------------------
def splitk(*edits):
    src = SPLITK
    for old, new in edits:
        assert old in src, old
        src = src.replace(old, new)
    return parse_source(src, str(KERNELS / "gemm_splitk.py"))["gemm_nt_splitk"]


def test_splits_of_one_step_too_many_overlap():
    k = splitk(("k = ks * KS + kk", "k = ks * (KS - 1) + kk"))
    (f, *_) = [f for f in errors(check(k)) if f.check == "tag.k-coverage"]
    assert "twice" in f.message and f.op == "atomic_add"


def test_adding_every_split_to_the_same_tile_is_intended():
    """Splits adding into one element are the reduction, not a race: no store-race."""
    assert not [f for f in check(splitk()) if f.check == "tag.store-race"]


# -- witnesses ---------------------------------------------------------------------------------
def test_witness_inverts_an_affine_term_with_a_symbolic_coefficient():
    ctx = Context()
    K = ctx.var("K", "size", lower=1)
    ks, kk, j = (ctx.var(n, "iteration") for n in ("ks", "kk", "j"))
    KS = z3.UDiv(K + 63, 64)
    P = ctx.mul(ks, KS)
    term = 64 * P + 64 * kk + 16 * j + 3
    const, entries = witness.decompose(term, [ks, kk, j], witness.atoms_by_id(ctx))
    assert z3.simplify(const).as_long() == 3
    by_name = {str(e.var): e for e in entries.values()}
    assert by_name["ks"].factor is not None and by_name["kk"].scale == 64
    target = z3.BitVec("target", 64)
    pairs = witness.euclid(target, const, entries)
    for k_value, target_value in [(1000, 515), (64 * 9, 64 * 9 * 2 + 64 * 3 + 16 + 3)]:
        sub = [(K, z3.BitVecVal(k_value, 64)), (target, z3.BitVecVal(target_value, 64))]
        values = {str(x): z3.simplify(z3.substitute(y, *sub)).as_long() for x, y in pairs}
        total = (64 * values[str(P)] + 64 * values["kk"] + 16 * values["j"] + 3)
        assert total == target_value
        assert values[str(P)] == values["ks"] * ((k_value + 63) // 64)
        assert values["kk"] < (k_value + 63) // 64 and values["j"] < 4


def test_a_term_that_is_not_affine_has_no_witness():
    ctx = Context()
    x = ctx.var("x", "iteration")
    assert witness.decompose(z3.UDiv(x, 3) + x, [x], witness.atoms_by_id(ctx)) is None
