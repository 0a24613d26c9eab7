"""Kernels longer than the GEMM coder step's 16,000 characters (the library attention kernel
is ~17,000): the kernel coder sizes its limits to the task, so the start kernel is judged
whole (it was cut at 16,000 characters and judged broken), a whole-file rewrite of it is
taken, the edits' result is bounded, and a task with no kernel yet (KernelBench) asks for a
reply as long as a new kernel may be."""
import json
from pathlib import Path

import pytest

from argus.agent.coder import MAX_KERNEL_CHARS
from argus.agent.coding.budget import FLOOR, kernel_chars, reply_tokens
from argus.agent.coding.coder_reply import parse_coder_reply
from argus.agent.coding.kernel_planner import KernelPlanner
from argus.agent.planner import Budget
from argus.agent.reply import ReplyError
from argus.agent.tasks.file_task import file_task

from tests.agent.scripted import ScriptedProvider

REPO = Path(__file__).resolve().parents[3]
COPY = (REPO / "examples/copy.py").read_text()
PAD = "".join(f"# note {i:04d}: a long comment about the copy kernel's tiles and layout.\n"
              for i in range(260))
BIG = COPY.replace("import numpy as np\n", PAD + "import numpy as np\n", 1)


def test_the_limits_follow_the_start_kernel():
    assert len(BIG) > MAX_KERNEL_CHARS + 1000
    assert kernel_chars("") == MAX_KERNEL_CHARS == kernel_chars(COPY)
    assert kernel_chars(BIG) >= len(BIG) * 1.5
    # no kernel yet: room for a new kernel as long as the task allows, not the floor
    assert reply_tokens("") > MAX_KERNEL_CHARS / 3.2 > FLOOR
    assert reply_tokens("", new_kernel_chars=kernel_chars(BIG)) > len(BIG) * 1.5 / 3.2
    assert reply_tokens("", max_tokens=999) == 999


def test_a_whole_rewrite_of_a_long_kernel_is_taken_within_its_limit():
    reply = json.dumps({"technique": "t"}) + "\n```python\n" + BIG + "```\n"
    with pytest.raises(ReplyError, match="the limit is 16000"):
        parse_coder_reply(reply, BIG)                        # the GEMM coder step's limit
    assert parse_coder_reply(reply, BIG, kernel_chars(BIG)).source == BIG
    grown = "<<<<<<< SEARCH\n    tm = block_id(\"x\")\n=======\n    tm = block_id(\"x\")\n" + \
        PAD * 2 + ">>>>>>> REPLACE\n"
    with pytest.raises(ReplyError, match="after the edits the kernel is"):
        parse_coder_reply(grown, BIG, kernel_chars(BIG))


def test_a_start_kernel_over_16000_characters_is_judged_whole(tmp_path):
    path = tmp_path / "big_copy.py"
    path.write_text(BIG)
    task = file_task(path, "copy", {"M": 128, "N": 64}, sets=1)
    two_blocks = BIG.replace("BN: const = 64):", "BN: const = 32):")
    assert two_blocks != BIG
    provider = ScriptedProvider([json.dumps({"technique": "narrow"}) + "\n```python\n" +
                                 two_blocks + "```\n", json.dumps({"stop": True})])
    run = KernelPlanner(provider, task, budget=Budget(evaluations=3),
                        work_dir=str(tmp_path / "work"),
                        checker=None, compiler=lambda *a: {"ok": True}).run()
    start, rewrite = run.steps[0], run.steps[1]
    assert start.outcome.status == "ok", start.outcome.feedback
    assert Path(start.kernel).read_text() == BIG               # written whole, not cut
    assert rewrite.outcome.status == "ok", rewrite.outcome.feedback
    assert Path(rewrite.kernel).read_text() == two_blocks
    assert provider.requests[0].max_tokens > len(BIG) / 3.2
