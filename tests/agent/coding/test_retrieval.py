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
