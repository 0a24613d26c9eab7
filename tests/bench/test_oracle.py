"""Each known cheat is rejected by the oracle; honest candidates pass."""
import math

import pytest
import torch

from argus.bench.oracle import (OutputHistory, Tolerance, check_once, error_metrics, judge,
                                run_checks)
from argus.bench.poison import fill_poison, unwritten_mask
from argus.bench.inputs import Sampler
from conftest import honest


def _reasons(reports):
    return " | ".join(why for r in reports for why in r.reasons)


def test_honest_candidate_passes(fp32_problem, bf16_problem):
    for problem in (fp32_problem, bf16_problem):
        reports = run_checks(problem, honest, problem.peer, count=4)
        assert all(r.passed for r in reports), _reasons(reports)
        assert {r.distribution for r in reports} == {"normal", "wide"}


def test_honest_candidate_with_other_summation_order_passes(fp32_problem):
    def split_k(inputs, outputs):
        a, b = inputs
        h = a.shape[1] // 2
        outputs[0].copy_(a[:, :h] @ b[:h] + a[:, h:] @ b[h:])
    assert all(r.passed for r in run_checks(fp32_problem, split_k, fp32_problem.peer, count=4))


def test_zeros_are_rejected(fp32_problem):
    reports = run_checks(fp32_problem, lambda i, o: o[0].zero_(), fp32_problem.peer, count=2)
    assert not any(r.passed for r in reports)
    assert "all zeros" in _reasons(reports)


def test_constant_output_is_rejected(fp32_problem):
    reports = run_checks(fp32_problem, lambda i, o: o[0].fill_(0.5), fp32_problem.peer, count=2)
    assert not any(r.passed for r in reports)
    assert "constant" in _reasons(reports)


def test_cached_outputs_replayed_for_new_inputs_are_rejected(fp32_problem):
    cache = {}

    def replay(inputs, outputs):
        if "out" not in cache:
            honest(inputs, outputs)
            cache["out"] = outputs[0].clone()
        outputs[0].copy_(cache["out"])

    reports = run_checks(fp32_problem, replay, fp32_problem.peer, count=3)
    assert reports[0].passed
    assert not reports[1].passed and not reports[2].passed
    assert "cached result replayed" in _reasons(reports[1:])


def test_replaying_the_peers_earlier_output_is_named(fp32_problem):
    stash = {}

    def peer(inputs, outputs):
        fp32_problem.peer(inputs, outputs)
        stash.setdefault("first", outputs[0].clone())

    def thief(inputs, outputs):
        if "first" in stash:
            outputs[0].copy_(stash["first"])
        else:
            honest(inputs, outputs)

    reports = run_checks(fp32_problem, thief, peer, count=2)
    assert not reports[1].passed
    assert "peer" in _reasons(reports[1:]) and "replayed" in _reasons(reports[1:])


def test_partial_write_is_rejected_and_counted(fp32_problem):
    def half(inputs, outputs):
        a, b = inputs
        outputs[0][: a.shape[0] // 2] = a[: a.shape[0] // 2] @ b

    report = check_once(fp32_problem, half, fp32_problem.peer, seed=3)
    assert not report.passed
    assert report.unwritten == (48 // 2) * 40
    assert "never written" in " ".join(report.reasons)


def test_poison_aware_partial_write_is_caught_by_the_second_poison(fp32_problem):
    # Writes row 0 only where it finds NaN and leaves any other poison alone: the first
    # run looks perfect, the run over the finite second poison does not.
    def sneaky(inputs, outputs):
        out = outputs[0]
        kept = out[0].clone()
        honest(inputs, outputs)
        out[0] = torch.where(torch.isnan(kept), out[0], kept)

    report = check_once(fp32_problem, sneaky, fp32_problem.peer, seed=4)
    assert not report.passed
    assert "second run (other poison)" in " ".join(report.reasons)


def test_precision_downgrade_beyond_the_peers_error_is_rejected(fp32_problem):
    def fp16(inputs, outputs):
        outputs[0].copy_((inputs[0].half() @ inputs[1].half()).float())

    def bf16(inputs, outputs):
        outputs[0].copy_((inputs[0].bfloat16() @ inputs[1].bfloat16()).float())

    for cheat in (fp16, bf16):
        reports = run_checks(fp32_problem, cheat, fp32_problem.peer, count=2)
        assert not any(r.passed for r in reports)
        assert "relative L2 error" in _reasons(reports)


def test_nan_output_is_rejected_even_in_one_element(fp32_problem):
    def one_nan(inputs, outputs):
        honest(inputs, outputs)
        outputs[0][3, 5] = float("nan")

    report = check_once(fp32_problem, one_nan, fp32_problem.peer, seed=5)
    assert not report.passed and report.candidate[0]["nonfinite"] == 1


def test_inf_output_is_rejected(fp32_problem):
    def one_inf(inputs, outputs):
        honest(inputs, outputs)
        outputs[0][0, 0] = float("inf")

    report = check_once(fp32_problem, one_inf, fp32_problem.peer, seed=6)
    assert not report.passed and "non-finite" in " ".join(report.reasons)


def test_one_wrong_element_is_rejected(fp32_problem):
    def off_by_one(inputs, outputs):
        honest(inputs, outputs)
        outputs[0][7, 7] += 1.0

    assert not check_once(fp32_problem, off_by_one, fp32_problem.peer, seed=7).passed


def test_candidate_that_scribbles_on_its_inputs_is_rejected(fp32_problem):
    def scribble(inputs, outputs):
        honest(inputs, outputs)
        inputs[0].mul_(1.0001)

    report = check_once(fp32_problem, scribble, fp32_problem.peer, seed=8)
    assert "modified its inputs" in " ".join(report.reasons)


def test_pointer_keyed_cache_is_caught_when_buffers_are_refilled_in_place(fp32_problem):
    cache = {}

    def by_pointer(inputs, outputs):
        key = (inputs[0].data_ptr(), inputs[1].data_ptr())
        if key not in cache:
            honest(inputs, outputs)
            cache[key] = outputs[0].clone()
        outputs[0].copy_(cache[key])

    inputs = fp32_problem.make_inputs(Sampler(11))
    outs = fp32_problem.make_outputs(inputs)
    first = check_once(fp32_problem, by_pointer, fp32_problem.peer, seed=12,
                       input_buffers=inputs, output_buffers=outs)
    assert first.passed
    again = check_once(fp32_problem, by_pointer, fp32_problem.peer, seed=13,
                       input_buffers=inputs, output_buffers=outs)
    assert not again.passed


def test_inputs_are_fresh_per_seed_never_zero_and_wide_is_larger(fp32_problem):
    a1 = fp32_problem.make_inputs(Sampler(1))[0]
    a2 = fp32_problem.make_inputs(Sampler(2))[0]
    wide = fp32_problem.make_inputs(Sampler(1, "wide"))[0]
    assert not torch.equal(a1, a2)
    assert torch.equal(a1, fp32_problem.make_inputs(Sampler(1))[0])
    assert (a1 != 0).float().mean() > 0.99
    assert wide.abs().max() > 4 * a1.abs().max()


def test_unknown_distribution_is_a_clear_error():
    with pytest.raises(ValueError, match="distribution"):
        Sampler(0, "zeros")


def test_error_metrics_on_known_values():
    ref = torch.tensor([3.0, 4.0], dtype=torch.float64)
    m = error_metrics(torch.tensor([3.0, 4.5]), ref)
    assert math.isclose(m.rel_l2, 0.5 / 5.0) and math.isclose(m.max_abs, 0.5)
    assert error_metrics(torch.tensor([float("nan"), 4.0]), ref).nonfinite == 1


def test_judge_uses_the_peers_error_not_a_fixed_tolerance():
    from argus.bench.oracle import ErrorMetrics
    tol = Tolerance()
    peer = ErrorMetrics(rel_l2=1e-3, max_abs=1e-2, ref_max_abs=10.0, nonfinite=0)
    ok = ErrorMetrics(rel_l2=1.9e-3, max_abs=3e-2, ref_max_abs=10.0, nonfinite=0)
    bad = ErrorMetrics(rel_l2=2.5e-3, max_abs=3e-2, ref_max_abs=10.0, nonfinite=0)
    assert judge(ok, peer, torch.float32, tol) == []
    assert judge(bad, peer, torch.float32, tol)
    tighter_peer = ErrorMetrics(rel_l2=1e-4, max_abs=1e-3, ref_max_abs=10.0, nonfinite=0)
    assert judge(ok, tighter_peer, torch.float32, tol)


def test_tolerance_below_one_is_refused():
    with pytest.raises(ValueError, match="factor"):
        Tolerance(factor=0.5)


def test_unwritten_mask_needs_both_poisons():
    a, b = torch.empty(4), torch.empty(4)
    fill_poison((a,), 0)
    fill_poison((b,), 1)
    a[:2] = 1.0
    b[:2] = 1.0
    b[2] = -1234.5  # a written element that happens to equal poison B, but not A
    a[2] = 2.0
    assert unwritten_mask(a, b).tolist() == [False, False, False, True]


def test_history_keeps_only_recent_outputs():
    h = OutputHistory(keep=2)
    for i in range(3):
        h.add(str(i), (torch.full((2,), float(i)),))
    assert h.replayed_from((torch.zeros(2),)) is None
    assert h.replayed_from((torch.full((2,), 2.0),)) == "2"


def test_evaluate_catches_a_pointer_keyed_cache_without_timing(fp32_problem):
    from argus.bench.evaluate import evaluate
    cache = {}

    def by_pointer(inputs, outputs):
        key = inputs[0].data_ptr()
        if key not in cache:
            honest(inputs, outputs)
            cache[key] = outputs[0].clone()
        outputs[0].copy_(cache[key])

    out = evaluate(fp32_problem, by_pointer, checks=2)
    assert out["status"] == "incorrect"
    assert not all(c["passed"] for c in out["checks"])


def test_transposed_b_layout_and_half_precision_problems(bf16_problem):
    from argus.bench.problems import matmul
    nk = matmul(40, 24, 32, "bfloat16", b_layout="nk")
    a, b = nk.make_inputs(Sampler(0))
    assert b.shape == (24, 32)

    def honest_nk(inputs, outputs):
        torch.matmul(inputs[0], inputs[1].t(), out=outputs[0])

    def forgot_the_transpose(inputs, outputs):  # reads N x K memory as if it were K x N
        torch.matmul(inputs[0], inputs[1].reshape(32, 24), out=outputs[0])

    assert all(r.passed for r in run_checks(nk, honest_nk, nk.peer, count=2))
    assert not any(r.passed for r in run_checks(nk, forgot_the_transpose, nk.peer, count=2))
    fp16 = matmul(16, 16, 4096, "float16")
    reports = run_checks(fp16, fp16.peer, fp16.peer, count=2)  # wide inputs must not overflow
    assert all(r.passed for r in reports), _reasons(reports)


def test_bad_problem_arguments_are_clear_errors():
    from argus.bench.problems import matmul
    with pytest.raises(ValueError, match="b_layout"):
        matmul(4, 4, 4, b_layout="tn")
    with pytest.raises(ValueError, match="dtype"):
        matmul(4, 4, 4, dtype="float8")
    with pytest.raises(ValueError, match="positive"):
        matmul(0, 4, 4)
