"""The GEMM planner's request: a reply budget that fits a whole kernel (the coder step
rewrites gemm_nt, ~2,900 tokens, which 1,024 cut), and the latest step's feedback in full
within its size budget (older steps keep the shorter bound)."""
from argus.agent.context import PlannerContext
from argus.agent.evaluators.base import Outcome
from argus.agent.gemm_config import SMALLEST
from argus.agent.prompt import LATEST_FEEDBACK_CHARS, build_request, library_kernel_text
from argus.agent.trajectory import Step, Trajectory
from argus.agent.untrusted import MAX_CHARS


def test_reply_budget_fits_the_library_kernel(task4k):
    request = build_request(PlannerContext(Trajectory(task4k, SMALLEST), [], "cpu"))
    assert request.max_tokens > len(library_kernel_text()) / 3.2 > 1024
    assert build_request(PlannerContext(Trajectory(task4k, SMALLEST), [], "cpu"),
                         max_tokens=500).max_tokens == 500


def test_latest_feedback_in_full_older_bounded(task4k):
    long = "counterexample line\n" * 300                   # 6,000 characters
    traj = Trajectory(task4k, SMALLEST, [
        Step(0, "start", SMALLEST, Outcome("invalid", feedback="old " + long), 0.0),
        Step(1, "x", None, Outcome("invalid", source="verifier", feedback="new " + long), 0.0)])
    text = build_request(PlannerContext(traj, [], "cpu")).messages[-1].content
    newest = text.split("<tool-output step=1")[1].split("</tool-output>")[0]
    oldest = text.split("<tool-output step=0")[1].split("</tool-output>")[0]
    assert newest.count("counterexample line") == 300 and "more characters cut" not in newest
    assert "more characters cut" in oldest and len(oldest) < MAX_CHARS + 200
    assert len(long) < LATEST_FEEDBACK_CHARS
