"""The attention benchmark's correctness logic on the CPU (argus/bench/attention_bench.py),
with the interpreter standing in for the GPU: shapes parse and count their FLOPs exactly,
the comparison fails on NaN, unwritten rows, a dropped key, a wrong lse; a correct run
passes; the summary applies the issue's bar; without a GPU the command exits 2."""

import math

import pytest
import torch

from argus.bench import attention_bench as ab


@pytest.fixture(autouse=True)
def interpret(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))


def test_cases_parse_and_print_back():
    c = ab.parse_case("4x32x8x4096x4096x128c:bshd")
    assert (c.b, c.hq, c.hk, c.sq, c.sk, c.d, c.causal, c.layout) == \
        (4, 32, 8, 4096, 4096, 128, True, "bshd")
    assert ab.parse_case(c.text()) == c
    with pytest.raises(ValueError, match="want BxHQxHKxSQxSKxD"):
        ab.parse_case("4x16x128")


@pytest.mark.parametrize("sq, sk", [(5, 5), (3, 9), (9, 3), (1, 7), (7, 1)])
def test_kept_pairs_count_the_bottom_right_mask(sq, sk):
    brute = sum(1 for q in range(sq) for k in range(sk) if k <= q + sk - sq)
    assert ab.Case(1, 1, 1, sq, sk, 64, True).kept_pairs() == brute
    assert ab.Case(1, 1, 1, sq, sk, 64).kept_pairs() == sq * sk
    assert ab.Case(2, 3, 1, sq, sk, 64, True).flops() == 4 * 2 * 3 * 64 * brute


def _ref(case, seed=0):
    q, k, v = ab.make_inputs(case, seed, "cpu")
    heads = [ab.heads_first(x, case.layout) for x in (q, k, v)]
    return (q, k, v), ab.reference_rows(*heads, case.causal, case.d ** -0.5)


def test_compare_passes_the_reference_and_fails_each_kind_of_wrong():
    case = ab.Case(1, 2, 2, 40, 70, 64, True)
    _, (ro, rl) = _ref(case)
    good = ro.to(torch.bfloat16)
    assert ab.compare(good, rl.float(), ro, rl, "bf16") == []
    nan = good.clone()
    nan[0, 1, 39, 5] = float("nan")
    assert "NaN/inf" in ab.compare(nan, rl.float(), ro, rl, "bf16")[0]
    shifted = good.clone()
    shifted[:, :, 10:] += 0.05
    assert any("O max error" in r for r in ab.compare(shifted, rl.float(), ro, rl, "bf16"))
    assert any("lse" in r for r in ab.compare(good, rl.float() + 0.01, ro, rl, "bf16"))
    no_key = rl.clone()
    no_key[0, 0, 0] = -math.inf
    assert any("-inf exactly" in r for r in ab.compare(good, rl.float(), ro, no_key, "bf16"))


@pytest.mark.parametrize("case", [ab.Case(1, 4, 2, 70, 150, 64, True),
                                  ab.Case(1, 2, 1, 30, 100, 128, False, "bshd")],
                         ids=lambda c: c.text())
def test_check_case_passes_the_kernel_on_the_interpreter(case):
    r = ab.check_case(case, ab.argus_attention, 3, "cpu")
    assert r["status"] == "ok", r["reasons"]
    assert r["rows_checked"] == "all"


def test_check_case_catches_unwritten_rows_and_a_dropped_key():
    case = ab.Case(1, 2, 2, 70, 100, 64)

    def skips_last_row(q, k, v, causal, scale, layout, out, lse):
        ab.argus_attention(q, k, v, causal, scale, layout, out, lse)
        out[:, :, -1] = float("nan")          # as if the tail row were never stored

    def drops_a_key(q, k, v, causal, scale, layout, out, lse):
        ab.argus_attention(q, k[:, :, :-1].contiguous(), v[:, :, :-1].contiguous(), causal,
                           scale, layout, out, lse)

    assert ab.check_case(case, skips_last_row, 3, "cpu")["status"] == "wrong"
    assert ab.check_case(case, drops_a_key, 3, "cpu")["status"] == "wrong"


def test_sampled_rows_include_both_ends():
    rows = ab.sample_rows(ab.Case(1, 16, 16, 16384, 16384, 128, True), 0)
    assert rows is not None and rows[0] == 0 and rows[-1] == 16383 and len(rows) >= 128
    assert ab.sample_rows(ab.Case(1, 2, 2, 100, 100, 64), 0) is None


def test_summary_applies_the_issues_bar():
    rows = [{"status": "ok", "ratio_cudnn": 1.0, "ratio_flash": 1.7},
            {"status": "ok", "ratio_cudnn": 0.92, "ratio_flash": 1.65}]
    s = ab.summarize(rows)
    assert s["meets_issue"] and math.isclose(s["geomean_ratio_cudnn"], math.sqrt(0.92))
    rows.append({"status": "ok", "ratio_cudnn": 0.8, "ratio_flash": 2.0})
    assert not ab.summarize(rows)["meets_issue"]      # one below 0.85


def test_no_gpu_exits_2_with_one_line(capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert ab.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no CUDA GPU" in err[0]


def test_a_random_draw_is_fixed_by_its_seed_and_spans_the_families():
    cases = ab.random_cases(24, 61)
    assert [c.text() for c in cases] == [c.text() for c in ab.random_cases(24, 61)]
    assert [c.text() for c in cases] != [c.text() for c in ab.random_cases(24, 62)]
    assert {c.d for c in cases} == {64, 128} and {c.layout for c in cases} == {"bhsd", "bshd"}
    assert any(c.sq <= 128 < c.sk for c in cases)                 # decode-like
    assert any(c.sq % 128 and c.sq == c.sk for c in cases)        # prefill off the block
    assert all(c.hq % c.hk == 0 and 1 <= c.b <= 64 for c in cases)
    assert any(c.causal for c in cases) and not all(c.causal for c in cases)


def test_random_and_shapes_together_or_a_negative_count_are_usage_errors(capsys):
    assert ab.main(["--random", "3", "--shapes", "1x2x2x128x128x64"]) == 2
    assert ab.main(["--random", "-1"]) == 2
    assert "at least 1" in capsys.readouterr().err
