"""A filtered walk over a loop nest (`for a: for b: w = X + a*B + b; if w % C == R:`) is
emitted as a strided loop over the kept items (argus/codegen/lower/filtered_walk.py); any
other form is emitted as written. The emitted loop is compiled on the host (g++) with the
walk's own text and compared, item by item and in order, with the nest it replaces."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess

import pytest

from argus.codegen import generate
from argus.frontend import parse_source
from argus.ops.library import generated

HEAD = '''from argus.lang import *


@kernel(grid=(7,), block=128)
def walk(A: Tensor["M", "N", "fp32"], C: Tensor["M", "N", "fp32"]):
    bid = block_id("x")
    NB = N // 64
    MB = M // 64
    for e in range(20):
        X = e * NB * MB - 2
'''
BODY = '''                    t = load(tile(A, (64, 64), (b, a)), layout="wgmma_acc_m64n64")
                    store(tile(C, (64, 64), (b, a)), t)
'''


def source(walk_lines: str) -> str:
    return HEAD + walk_lines + BODY


NEST = source('''        for a in range(NB):
            for b in range(MB):
                w = X + a * MB + b
                if w % 7 == bid:
''')


def code_of(src: str) -> str:
    return generate(parse_source(src, "walk.py")["walk"]).source


def test_the_nest_is_emitted_as_a_strided_loop():
    code = code_of(NEST)
    assert "argus_walk_d" in code and "+= 7)" in code
    assert not re.search(r"for \(int b = 0;", code)       # the inner loop is gone


def test_the_moe_gemms_walks_are_strided():
    for module, extra in (("moe_down", {}), ("moe_gate_up", {"GATHER": "warpgroup"})):
        for order in ("n_major", "m_major"):
            code = generated(module, module, E=64, DT="bf16", ORDER=order, **extra).source
            # the producer's walk and the consumers' walk
            assert code.count("argus/codegen/lower/filtered_walk.py") == 2, (module, order)


@pytest.mark.parametrize("walk_lines", [
    # an else branch: it runs for the other blocks' items
    '''        for a in range(NB):
            for b in range(MB):
                w = X + a * MB + b
                if w % 7 == bid:
                    pass
                else:
''',
    # the residue moves with the counter
    '''        for a in range(NB):
            for b in range(MB):
                w = X + a * MB + b
                if w % 7 == b % 3:
''',
    # the modulus is not a constant
    '''        for a in range(NB):
            for b in range(MB):
                w = X + a * MB + b
                if w % NB == bid:
''',
    # a counter subtracted
    '''        for a in range(NB):
            for b in range(MB):
                w = X + a * MB - b
                if w % 7 == bid:
''',
    # not a filter of the whole body
    '''        for a in range(NB):
            for b in range(MB):
                w = X + a * MB + b
                if w % 7 == bid or b == 0:
''',
])
def test_other_forms_are_emitted_as_written(walk_lines):
    code = code_of(source(walk_lines))
    assert "argus_walk_d" not in code
    assert re.search(r"for \(int b = 0;", code)


def test_a_coefficient_not_the_inner_extent_leaves_the_outer_loop():
    """w = X + a * NB + b over b < MB: the (a, b) items overlap or leave gaps, so the two
    loops are not one walk; the inner loop alone is one (X + a * NB is its offset)."""
    code = code_of(source('''        for a in range(NB):
            for b in range(MB):
                w = X + a * NB + b
                if w % 7 == bid:
'''))
    assert re.search(r"for \(int a = 0;", code)
    assert "const int b = argus_walk_d" in code


@pytest.mark.parametrize("walk_lines", [
    # a residue computed inside the nest (it is bound only when the body is lowered)
    '''        for a in range(NB):
            for b in range(MB):
                w = X + a * MB + b
                r = bid + 1
                if w % 7 == r:
''',
    # an offset with an operator the walk's C text does not take
    '''        for a in range(NB):
            for b in range(MB):
                w = (bid % 3) * 5 + a * MB + b
                if w % 7 == bid:
''',
])
def test_forms_the_walk_cannot_take_are_emitted_as_written_without_error(walk_lines):
    """(Found by a review: these raised a CodegenError and a KeyError.)"""
    code = code_of(source(walk_lines))
    assert "argus_walk_d" not in code and re.search(r"for \(int b = 0;", code)


def test_a_walk_inside_an_unrolled_loop_is_left_as_written():
    """A constant loop of up to 16 trips is unrolled; its copies' strided walks would keep
    their bounds live at once (spills in a 40-register producer)."""
    code = code_of(NEST.replace("range(20)", "range(3)"))
    assert "argus_walk_d" not in code and re.search(r"for \(int b = 0;", code)


def test_the_switch_turns_it_off(monkeypatch):
    monkeypatch.setenv("ARGUS_FILTERED_WALK", "0")
    assert "argus_walk_d" not in code_of(NEST)


def test_one_loop_walk():
    code = code_of(source('''        for a in range(NB):
            for b in range(MB):
                w = X + a + b
                if w % 7 == bid:
'''))
    assert "const int b = argus_walk_d" in code          # the inner loop alone, offset X + a
    assert "argus::max(" in code                         # not a bare max: a DSL name may shadow it
    assert re.search(r"for \(int a = 0;", code)


HARNESS = r'''
#include <cstdio>
namespace argus {
int mod(int a, int b) { const int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
}
static int max(int x, int y) { return x > y ? x : y; }
static void walk(int N, int M, int e, int bid) {
  const int NB = N / 64, MB = M / 64;
  const int X = e * NB * MB - 2;
WALK
      printf("%d %d %d %d\n", e, bid, a, b);
    }
  }
  }
}
int main() {
  for (int N = 0; N <= 256; N += 64)
    for (int M = 0; M <= 320; M += 64)
      for (int e = 0; e < 3; ++e)
        for (int bid = -1; bid <= 7; ++bid) walk(N, M, e, bid);
}
'''


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
def test_the_emitted_loop_visits_exactly_the_filtered_items_in_order(tmp_path):
    code = code_of(NEST)
    start = code.index("// the items w % 7 ==")
    start = code.rindex("\n", 0, start) + 1
    stop = code.index("const int b = ", start)
    stop = code.index("\n", stop)
    text = code[start:stop]
    # the walk's C names for the kernel's values, as the harness declares them
    text = re.sub(r"\bNB_?\d*\b", "NB", text)
    text = re.sub(r"\bMB_?\d*\b", "MB", text)
    text = re.sub(r"\bX_?\d*\b", "X", text)
    text = text.replace("(int)blockIdx.x", "bid")
    program = tmp_path / "walk.cpp"
    program.write_text(HARNESS.replace("WALK", text))
    binary = tmp_path / "walk"
    subprocess.run(["g++", "-std=c++17", "-O1", "-o", str(binary), str(program)], check=True,
                   capture_output=True)
    got = subprocess.run([str(binary)], check=True, capture_output=True,
                         text=True).stdout.split("\n")
    want = []
    for n, m, e, bid in itertools.product(range(0, 257, 64), range(0, 321, 64), range(3),
                                          range(-1, 8)):
        nb, mb = n // 64, m // 64
        x = e * nb * mb - 2
        want += [f"{e} {bid} {a} {b}" for a in range(nb) for b in range(mb)
                 if (x + a * mb + b) % 7 == bid]
    assert [line for line in got if line] == want
    assert len(want) > 100
