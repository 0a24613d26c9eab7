"""Each step's retrieval follows the profile: the signals of the latest evaluated candidate
(the cost model's on a CPU) go into the knowledge query and its signal filter, so a
different profile retrieves different techniques, and the request lists what was
retrieved for that profile."""
from types import SimpleNamespace

from argus.agent.coding.kernel_planner import CoderState, KernelPlanner
from argus.agent.coding.kernel_prompt import user_prompt


def _task():
    return SimpleNamespace(op="attention", start_source="", label="attention T=256",
                           description="d", baselines={}, mode="kernel",
                           tolerance=SimpleNamespace(describe=lambda: "t"),
                           shape_class=lambda: [])


def test_the_profile_changes_what_is_retrieved_and_the_request_shows_it():
    planner = KernelPlanner(provider=None, task=_task(), work_dir="unused")
    plain = [t.id for t in planner.knowledge([])]
    mufu = planner.knowledge(["mufu-bound"])
    memory = planner.knowledge(["memory-bound"])
    assert "attn-exp2-prescale" in [t.id for t in mufu] and "attn-exp2-prescale" not in plain
    assert [t.id for t in mufu] != [t.id for t in memory]
    assert all("mufu-bound" in t.signals for t in mufu[:2])
    state = CoderState(_task(), [], None, "", [], mufu, ["mufu-bound"], 3, 1)
    text = user_prompt(state)
    assert "## Knowledge (retrieved for this step's profile: mufu-bound)" in text
    assert all(f"- {t.id}:" in text for t in mufu)


def test_the_last_steps_failures_share_the_feedback_budget_in_full():
    """A failure's text up to the whole budget is shown in full; several share it, each
    taking what the ones before left (the second of two 6,000-character texts was cut at
    2,000 characters while 4,000 were still free)."""
    from argus.agent.coding.kernel_prompt import FEEDBACK_CHARS
    from argus.agent.evaluators.base import Outcome
    from argus.agent.trajectory import Step

    def failed(i, n):
        body = "".join(f"line {i}.{k:05d} of the counterexample\n" for k in range(n))
        return Step(i, "t", None, Outcome("invalid", source="verifier", feedback=body), 0.0)

    one = failed(1, 150)
    assert 5000 < len(one.outcome.feedback) < FEEDBACK_CHARS
    text = user_prompt(CoderState(_task(), [one], None, "", [one], [], [], 3, 1))
    assert one.outcome.feedback.strip() in text and "characters cut" not in text
    two = [failed(1, 180), failed(2, 180)]               # ~6,500 characters each
    text = user_prompt(CoderState(_task(), two, None, "", two, [], [], 3, 2))
    shown = [text.split(f"<tool-output step={s.index} source=verifier status=invalid>")[1]
             .split("</tool-output>")[0] for s in two]
    assert all(len(block) >= FEEDBACK_CHARS // 2 for block in shown)
    assert sum(len(block) for block in shown) <= FEEDBACK_CHARS + 200
