"""The whole-kernel coder loop: best-of-N samples per step (the fastest correct one becomes
the current best), temperature and token budget in the request, retrieval from the
profile of the latest evaluated candidate, a provider failure recorded, not raised."""
from argus.agent.coding.kernel_planner import KernelPlanner
from argus.agent.planner import Budget
from argus.agent.providers.base import ProviderError
from argus.agent.tasks.file_task import file_task, op_task

from tests.agent.scripted import ScriptedProvider

from tests.agent.coding.replies import REPO, SLOW, STOP
from tests.agent.coding.replies import file_reply as _file


def test_best_of_n_keeps_the_fastest_correct_sample(attention, tmp_path):
    slow = SLOW.read_text()
    fast = slow.replace("S: const = 1,", "S: const = 2,")
    provider = ScriptedProvider([_file(slow.replace("BN: const = 64", "BN: const = 64 "), "same"),
                                 _file(fast, "two-stage"), STOP, STOP])
    planner = KernelPlanner(provider, attention, budget=Budget(evaluations=5), samples=2,
                            temperature=0.7, work_dir=str(tmp_path))
    run = planner.run()
    assert [s.index for s in run.steps] == [0, 1, 2]
    assert run.steps[1].outcome.ok and run.steps[2].outcome.ok
    assert run.best.index == 2 and run.best_source == fast
    first, second = provider.requests[0], provider.requests[1]
    assert first is second                     # both samples answer the same request
    assert first.temperature == 0.7 and first.max_tokens > len(slow) / 3.2
    # the profile of the latest evaluated candidate is this step's retrieval query
    signals = run.steps[2].outcome.details["estimate"]["signals"]
    later = provider.requests[2].messages[-1].content
    assert f"retrieved for this step's profile: {', '.join(signals)}" in later
    assert "## Current best kernel (step 2" in later


def test_provider_failure_is_recorded_and_stops(attention, tmp_path):
    class Down:
        name, model = "down", "m"

        def complete(self, request):
            raise ProviderError("endpoint down")

    run = KernelPlanner(Down(), attention, work_dir=str(tmp_path)).run()
    assert run.stop_reason == "provider failed: endpoint down"
    assert run.steps[-1].technique == "provider-error" and run.best.index == 0


def test_unparsable_and_unmatched_edit_replies_reach_the_next_prompt(attention, tmp_path):
    edit = "<<<<<<< SEARCH\n    nothing like this\n=======\n    x = 1\n>>>>>>> REPLACE\n"
    provider = ScriptedProvider(["no kernel here", edit, STOP])
    run = KernelPlanner(provider, attention, budget=Budget(evaluations=3),
                        work_dir=str(tmp_path)).run()
    assert [s.technique for s in run.steps[1:]] == ["unparsable-reply", "unparsable-reply"]
    assert "neither a ```python block nor edit blocks" in provider.prompt(1)
    assert "edit block 1: its SEARCH text" in provider.prompt(2)
    assert "does not occur in the current best kernel" in provider.prompt(2)


def test_a_file_task_from_a_kernel_file_and_its_reference(tmp_path):
    task = file_task(REPO / "examples/copy.py", "copy", {"M": 128, "N": 64})
    assert task.outputs == ["Y"] and task.tensors == ["X", "Y"] and len(task.input_sets) == 3
    assert task.evaluate(REPO / "examples/copy.py").ok
    wrong = (REPO / "examples/copy.py").read_text().replace("store(dst, x)", "store(dst, x * 2.0)")
    path = tmp_path / "wrong.py"
    path.write_text(wrong)
    out = task.evaluate(path)
    assert out.status == "incorrect" and "input set 2: output Y:" in out.feedback


def test_the_moe_op_is_a_task_of_its_kernel_file():
    task = op_task("moe", {}, sets=1)
    assert task.kernel == "moe_grouped" and "counts" in task.tensors
    out = task.evaluate(REPO / "examples/moe.py")
    assert out.ok and out.details["estimate"]["flops"] > 0
