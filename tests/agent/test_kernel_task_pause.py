"""A provider outage pauses a kernel task's episode (`argus optimize FILE.py::KERNEL`,
attention, moe, --kernelbench) instead of ending it as if done, and --resume continues it
from its out folder: against a loopback model server that fails in the middle of an
episode (HTTP 500, no retries) and then answers again. The resumed request carries the
steps made before the outage and the current best those steps made."""
import json
from pathlib import Path

from argus.cli.main import main

from tests.agent.loopback import LoopbackLLM

REPO = Path(__file__).resolve().parents[2]
COPY = REPO / "examples/copy.py"
STOP = json.dumps({"stop": True, "rationale": "good enough"})


def _edit(technique: str, old: str, new: str) -> str:
    return (json.dumps({"technique": technique}) +
            f"\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n")


NARROW = _edit("narrow", "BM: const = 64, BN: const = 64):", "BM: const = 64, BN: const = 32):")
WRONG = _edit("doubled", "    store(dst, x)", "    store(dst, x * 2.0)")


def _argv(server, out, *extra):
    return ["optimize", f"{COPY}::copy", "--shape", "M=128,N=128", "--provider", "openai",
            "--model", "m", "--base-url", server.root + "/v1", "--out", str(out),
            "--budget", "6", "--quiet", *extra]


def test_an_outage_pauses_a_kernel_task_and_resume_continues_it(tmp_path, monkeypatch,
                                                                  capsys):
    monkeypatch.setenv("ARGUS_API_KEY", "k")
    monkeypatch.setenv("ARGUS_MAX_RETRIES", "0")
    out = tmp_path / "out"
    with LoopbackLLM([NARROW, 500, WRONG, STOP]) as server:
        assert main(_argv(server, out)) == 1
        err = capsys.readouterr().err
        assert "paused: provider failed" in err and "--resume" in err
        first = json.loads((out / "trajectory.json").read_text())
        assert first["paused"] and first["meta"]["paused"]
        assert [s["technique"] for s in first["steps"]] == ["start", "narrow", "provider-error"]
        narrow = first["steps"][1]
        assert narrow["outcome"]["status"] == "ok"
        asked_before = len(server.requests)

        assert main(_argv(server, out, "--resume", "--json")) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    second = json.loads((out / "trajectory.json").read_text())
    assert not second["paused"] and second["meta"]["resumed_steps"] == 2
    assert [s["technique"] for s in second["steps"]] == ["start", "narrow", "doubled"]
    assert [s["index"] for s in second["steps"]] == [0, 1, 2]
    assert second["steps"][1] == narrow                      # kept, not judged again
    assert second["steps"][2]["outcome"]["status"] == "incorrect"
    assert summary["stop_reason"].startswith("planner stopped: good enough")
    assert summary["evaluations"] == 3
    # the first request after the outage is the one it interrupted: the same history, the
    # same current best (step 1 if it was faster than the start), the edit applied to it
    resumed = server.user_prompts()[asked_before]
    assert "step 1 | narrow | ok" in resumed and "provider-error" not in resumed
    best = summary["best_step"]
    assert f"## Current best kernel (step {best}" in resumed
    kernel = Path(second["steps"][2]["kernel"]).read_text()
    assert "store(dst, x * 2.0)" in kernel
    assert ("BN: const = 32):" in kernel) == (best == 1)


def test_resume_with_nothing_paused_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARGUS_API_KEY", "k")
    monkeypatch.setenv("ARGUS_MAX_RETRIES", "0")
    out = tmp_path / "out"
    with LoopbackLLM([STOP, STOP]) as server:
        assert main(_argv(server, out, "--resume")) == 2
        assert "no episode in" in capsys.readouterr().err
        assert main(_argv(server, out)) == 0                 # finished, not paused
        capsys.readouterr()
        assert main(_argv(server, out, "--resume")) == 2
        assert "is not paused" in capsys.readouterr().err
