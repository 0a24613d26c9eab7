"""Issue 20, done-when 1: against the loopback server replaying a scripted model,
`argus optimize attention` takes a deliberately slow, correct attention kernel (a one-stage
K/V ring) through a failing candidate, whose counterexample is in the next request, to a
faster correct kernel (an edit block: two stages) that becomes the current best and the
base of the next request; the invariant the model stated is inserted as a tag_assert and
proved by `argus check`."""
import json
from pathlib import Path

from argus.cli.main import main

from tests.agent.loopback import LoopbackLLM

REPO = Path(__file__).resolve().parents[2]
SLOW = REPO / "tests/fixtures/attention/flash_attention_one_stage.py"
STOP = json.dumps({"stop": True, "rationale": "good enough"})


def _no_rescale() -> str:
    """A candidate that forgets to rescale the accumulator to the new row max."""
    src = SLOW.read_text()
    assert "assign(o_acc, o_acc * alpha)" in src
    return src.replace("assign(o_acc, o_acc * alpha)", "assign(o_acc, o_acc)")


def _two_stages_edit() -> str:
    meta = {"technique": "gemm-deep-pipeline",
            "invariants": [{"after": "m_new = maximum(m_i, row_max(masked))",
                            "assert": "tag(m_new).iteration == j"}],
            "rationale": "a second ring stage overlaps the next K/V load with this block"}
    old = '              O: Tensor["T", HD, bf16], BM: const = 128, BN: const = 64, S: const = 1,'
    assert old in SLOW.read_text()
    new = old.replace("S: const = 1", "S: const = 2")
    return (json.dumps(meta) + "\n<<<<<<< SEARCH\n" + old + "\n=======\n" + new +
            "\n>>>>>>> REPLACE\n")


def test_attention_slow_kernel_to_faster_current_best(tmp_path, monkeypatch, capsys):
    first = json.dumps({"technique": "attn-online-softmax-tiling",
                        "rationale": "skip the rescale"}) + "\n```python\n" + _no_rescale() + "```\n"
    out = tmp_path / "out"
    with LoopbackLLM([first, _two_stages_edit(), STOP]) as server:
        monkeypatch.setenv("ARGUS_API_KEY", "k")
        monkeypatch.setenv("ARGUS_MAX_RETRIES", "0")
        code = main(["optimize", "attention", "--shape", "T=256", "--start", str(SLOW),
                     "--provider", "openai", "--model", "loopback",
                     "--base-url", server.root + "/v1", "--out", str(out), "--budget", "6",
                     "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    steps = json.loads((out / "trajectory.json").read_text())["steps"]
    assert [s["outcome"]["status"] for s in steps] == ["ok", "invalid", "ok"]
    start, failed, faster = steps
    # the failing candidate: the verifier's counterexample, with block, thread and iteration
    assert "tag.softmax-rescale" in failed["outcome"]["feedback"]
    assert faster["outcome"]["time_ms"] < start["outcome"]["time_ms"]
    assert faster["reward"] > 1.0 and summary["best_step"] == 2
    assert summary["speedup_over_start"] > 1.0
    assert "estimate" in summary["time_source"]

    second, third = server.user_prompts()[1:3]
    block = second.split("<tool-output step=1 source=verifier status=invalid>")[1]
    block = block.split("</tool-output>")[0]
    assert "error [tag.softmax-rescale]" in block and "iteration: j=1" in block
    assert "warpgroup" in block and "hint:" in block
    # the faster kernel is the current best and the base of the next request
    assert "## Current best kernel (step 2" in third
    best_block = third.split("<tool-output source=current-best-kernel>")[1]
    assert "S: const = 2," in best_block and "S: const = 1," not in best_block
    assert "tag_assert(tag(m_new).iteration == j)  # stated invariant 1" in best_block
    best = (out / "best_kernel.py").read_text()
    assert "S: const = 2," in best and "stated invariant 1" in best
    # the reply budget is sized to the kernel, not a fixed 1,024 tokens
    body = server.requests[1]
    assert body["max_tokens"] > len(SLOW.read_text()) / 3.2
    assert (out / "report.md").read_text().count("| ") >= 4
