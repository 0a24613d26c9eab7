"""The embedded planner on the GPU's space (the library DSL GEMM): it starts from the
smallest valid configuration, proposes only what argus.ops.matmul accepts and the verifier
proves (no evaluation spent on a refusal), never measures one kernel twice, and, on a
stand-in GPU whose speeds differ from its cost model, reaches >= 90% of the best hand-picked
configuration (benchmarks/optimize_gemm.py's list) within its default budget. Without a
space (the CPU cost model) the search keeps the whole knob table."""
import importlib.util
from pathlib import Path

import pytest

from argus.agent.evaluators import CpuEvaluator, GpuEvaluator
from argus.agent.library_space import LibrarySpace
from argus.agent.planner import DEFAULT_EVALUATIONS, IcrlPlanner
from argus.agent.providers.embedded import EmbeddedProvider
from argus.agent.task import GemmTask
from argus.ops.gemm_configs import FIXED_KNOBS, knobs_to_config
from tests.agent.fake_verifier import FakeVerifier
from tests.agent.landscape import landscape

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "optimize_gemm.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("optimize_gemm_for_planner", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (8192, 8192, 8192), (256, 8192, 8192)])
def test_reaches_90_percent_of_the_best_hand_picked_on_a_stand_in_gpu(shape, script):
    task = GemmTask(*shape)
    verifier, calls = FakeVerifier(), []
    space = LibrarySpace(verifier=verifier)
    evaluator = GpuEvaluator(landscape(calls=calls), space=space, library=True)
    hand = script.hand_picked(space, task)
    best_hand = max(evaluator.evaluate(c, task).tflops for c in hand.values())
    calls.clear()
    result = IcrlPlanner(EmbeddedProvider(), evaluator, task).run()
    steps = result.trajectory.steps
    assert steps[0].config == space.smallest_valid(task)            # the start
    assert result.evaluations == DEFAULT_EVALUATIONS == len(calls)  # every one measured
    assert all(s.outcome.status == "ok" for s in steps)             # none refused
    for s in steps:
        knobs_to_config(s.config.to_json(), "kn", *shape)           # matmul accepts it
        assert s.config.stages >= 2                                  # the verifier proves it
        assert all(getattr(s.config, k) == v for k, v in FIXED_KNOBS.items())
    kernels = [space.specialisation(s.config, task) for s in steps]
    assert len(kernels) == len(set(kernels))                         # no kernel twice
    assert result.trajectory.best().outcome.tflops >= 0.9 * best_hand


def test_the_gpu_evaluators_space_is_the_planners_and_refusals_cost_nothing():
    task = GemmTask(4096, 4096, 4096)
    calls = []
    space = LibrarySpace(verifier=FakeVerifier())
    evaluator = GpuEvaluator(landscape(calls=calls), space=space, library=True)
    planner = IcrlPlanner(EmbeddedProvider(), evaluator, task)
    assert planner.space is space and planner.start.stages == 2
    one_stage = planner.start.__class__(**{**planner.start.to_json(), "stages": 1})
    outcome = evaluator.evaluate(one_stage, task)
    assert outcome.status == "invalid" and "stage-reuse" in outcome.feedback and calls == []
    refused = planner.start.__class__(**{**planner.start.to_json(), "raster": "n"})
    outcome = evaluator.evaluate(refused, task)
    assert outcome.status == "compile_error" and "raster='n'" in outcome.feedback
    assert calls == []


def test_the_cost_model_search_keeps_the_whole_knob_table():
    task = GemmTask(4096, 4096, 4096)
    result = IcrlPlanner(EmbeddedProvider(), CpuEvaluator(), task).run()
    assert result.trajectory.start.BM == 64                          # gemm_config.SMALLEST
    outside = [s for s in result.trajectory.steps
               if any(getattr(s.config, k) != v for k, v in FIXED_KNOBS.items())]
    assert outside        # e.g. raster "n", BM 64, one consumer: modelled, not built yet


def test_a_models_prompt_names_the_values_the_library_runs():
    from argus.agent.context import PlannerContext
    from argus.agent.prompt import user_prompt
    from argus.agent.trajectory import Trajectory

    task = GemmTask(4096, 4096, 4096)
    space = LibrarySpace(verifier=FakeVerifier())
    ctx = PlannerContext(Trajectory(task, space.smallest_valid(task)), [], "gpu", space=space)
    text = user_prompt(ctx)
    assert "accepts only these knob values" in text and "BM 64/128;" in text
    assert "split_k 1/2/4/8" in text
    wide = user_prompt(PlannerContext(Trajectory(task, space.smallest_valid(task)), [], "cpu"))
    assert "accepts only" not in wide


@pytest.mark.parametrize("knob,value", [("epilogue", "smem_tma"), ("split_k", 2),
                                        ("cluster_m", 2)])
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (256, 8192, 8192)])
def test_a_variant_broken_on_the_gpu_is_not_proposed_again_and_again(knob, value, shape,
                                                                     script):
    """If a variant is wrong on the GPU, the planner learns it from the failures (two at
    most, then it gives the value up and searches elsewhere) and still reaches the bar."""
    from argus.agent.embedded_policy import GIVE_UP
    from tests.agent.landscape import broken

    task = GemmTask(*shape)
    space = LibrarySpace(verifier=FakeVerifier())
    calls = []
    evaluator = GpuEvaluator(broken(knob, value, calls=calls), space=space, library=True)
    hand = [evaluator.evaluate(c, task) for c in script.hand_picked(space, task).values()]
    best_hand = max(o.tflops for o in hand if o.ok)
    calls.clear()
    result = IcrlPlanner(EmbeddedProvider(), evaluator, task).run()
    failed = [s for s in result.trajectory.steps if s.outcome.status == "incorrect"]
    assert len(failed) <= GIVE_UP
    assert result.evaluations == DEFAULT_EVALUATIONS
    assert result.trajectory.best().outcome.tflops >= 0.9 * best_hand


def test_a_hanging_kernel_is_given_up_after_one_timeout():
    from tests.agent.landscape import broken

    task = GemmTask(4096, 4096, 4096)
    space = LibrarySpace(verifier=FakeVerifier())
    evaluator = GpuEvaluator(broken("epilogue", "smem_tma", status="timeout"), space=space,
                             library=True)
    result = IcrlPlanner(EmbeddedProvider(), evaluator, task).run()
    hung = [s for s in result.trajectory.steps if s.outcome.feedback.startswith("timeout")]
    assert len(hung) == 1 and hung[0].outcome.status == "error"
