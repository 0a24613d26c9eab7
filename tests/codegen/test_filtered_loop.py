"""A filtering scan of constant bounds (pure ops, then an `if` with no else) is emitted with
its filter evaluated 32 iterations ahead into a mask, the kept iterations run in order
(argus/codegen/lower/filtered_loop.py); other loops are emitted as written. The emitted
scan is compiled on the host (g++) and its iterations compared with the loop's."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from argus.codegen import generate
from argus.frontend import parse_source
from argus.ops.library import generated

HEAD = '''from argus.lang import *


@kernel(grid=(1,), block=128)
def scan(A: Tensor["M", "N", "fp32"], C: Tensor["M", "N", "fp32"], counts: Tensor[40, int32]):
    cnt = load_indices(tile(counts, (40,), (0,)))
'''
STORE = '''            t = load(tile(A, (64, 64), (0, 0)), layout="wgmma_acc_m64n64")
            store(tile(C, (64, 64), (0, 0)), t)
'''
SCAN = HEAD + '''    for e in range(40):
        rows = element(cnt, e)
        n = (rows + 63) // 64
        if n > 0:
''' + STORE


def code_of(src: str) -> str:
    return generate(parse_source(src, "scan.py")["scan"]).source


def test_the_scan_evaluates_its_filter_ahead():
    code = code_of(SCAN)
    assert "argus_scan_hits" in code and "__ffs(" in code
    assert "for (int e = 0; e < 40;" not in code


def test_the_decode_moe_gemms_scans_are_batched_and_prefill_ones_have_none():
    for module in ("moe_down", "moe_gate_up"):
        decode = generated(module, module, E=64, DT="bf16", WG=1, CONSUMERS=(1,),
                           SKIP_EMPTY=1).source
        assert decode.count("argus/codegen/lower/filtered_loop.py") == 2, module
        prefill = generated(module, module, E=64, DT="bf16").source   # SKIP_EMPTY = 0
        assert "argus_scan_hits" not in prefill, module


@pytest.mark.parametrize("loop", [
    # an else branch
    '''    for e in range(40):
        rows = element(cnt, e)
        if rows > 0:
            pass
        else:
''',
    # a load before the filter: not pure
    '''    for e in range(40):
        t0 = load(tile(A, (64, 64), (0, 0)), layout="wgmma_acc_m64n64")
        store(tile(C, (64, 64), (0, 0)), t0)
        if e > 3:
''',
    # symbolic bounds
    '''    for e in range(M):
        rows = element(cnt, e % 40)
        if rows > 0:
''',
    # too short to pay
    '''    for e in range(4):
        rows = element(cnt, e)
        if rows > 0:
''',
])
def test_other_loops_are_emitted_as_written(loop):
    assert "argus_scan_hits" not in code_of(HEAD + loop + STORE)


def test_a_filter_on_a_value_the_body_writes_is_not_batched(monkeypatch):
    """Evaluated ahead, the filter would read `seen` before the earlier iterations' assign
    wrote it. Two checks refuse it: the element reads a fragment's registers (not a
    snapshot), and the filter reads a value the body writes (the op table's `writes`);
    with both bypassed, the loop would be batched."""
    import argus.codegen.lower.filtered_loop as filtered_loop
    import argus.codegen.lower.structure as structure

    src = HEAD + '''    seen = fragment(int32, (4,), "rows(blocked)", init=0)
    for e in range(40):
        n = element(seen, e % 4)
        if n == 0:
            assign(seen, seen + 1)
''' + STORE
    assert "argus_scan_hits" not in code_of(src)
    monkeypatch.setattr(structure, "element_is_snapshot", lambda ctx, op: True)
    assert "argus_scan_hits" not in code_of(src)              # the writes check alone
    monkeypatch.setattr(filtered_loop, "_reads_written", lambda *a: False)
    assert "argus_scan_hits" in code_of(src)


def test_a_filter_on_a_vector_aliasing_a_written_fragment_is_not_batched():
    """to_indices of a fragment every thread holds reads its registers in place: the body's
    assign changes what the filter reads (found by a review; batched, the loop ran once
    where as written it runs 40 times)."""
    src = HEAD + '''    seen = fragment(int32, (4,), "rows(blocked)", init=0)
    v = to_indices(seen)
    for e in range(40):
        n = element(v, 0)
        if n == e:
            assign(seen, seen + 1)
''' + STORE
    assert "argus_scan_hits" not in code_of(src)


def test_the_switch_turns_it_off(monkeypatch):
    monkeypatch.setenv("ARGUS_FILTERED_LOOP", "0")
    assert "argus_scan_hits" not in code_of(SCAN)


HARNESS = r'''
#include <cstdio>
#include <cstdlib>
namespace argus {
int floordiv(int a, int b) { const int q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
}
static int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static int counts[40];
int main() {
  const int cnt_first = 0;
  srand(7);
  for (int trial = 0; trial < 200; ++trial) {
    for (int i = 0; i < 40; ++i) counts[i] = rand() % 4 == 0 ? rand() % 300 - 20 : 0;
    printf("trial %d:", trial);
    for (int i = 0; i < 40; ++i) printf(" %d", counts[i]);
    printf("\n");
SCAN
      printf("%d\n", e_2);
    }
  }
  }
}
'''


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a host C++ compiler")
def test_the_emitted_scan_runs_the_kept_iterations_in_order(tmp_path):
    code = code_of(SCAN)
    start = code.index("#pragma unroll 1")
    stop = code.index("argus_scan_hits_ - 1u;", start)
    stop = code.index("\n", stop)
    text = code[start:stop]
    assert "e_2 = " in text, text
    text = re.sub(r"#pragma unroll\s*\d*", "", text)
    program = tmp_path / "scan.cpp"
    program.write_text(HARNESS.replace("SCAN", text))
    binary = tmp_path / "scan"
    subprocess.run(["g++", "-std=c++17", "-O1", "-o", str(binary), str(program)], check=True,
                   capture_output=True)
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    trials = out.split("trial ")[1:]
    assert len(trials) == 200
    kept_total = 0
    for trial in trials:
        head, *iterations = trial.strip().split("\n")
        counts = [int(v) for v in head.split(":")[1].split()]
        want = [e for e in range(40) if (counts[e] + 63) // 64 > 0]
        assert [int(v) for v in iterations] == want
        kept_total += len(want)
    assert kept_total > 200
