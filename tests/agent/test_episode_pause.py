"""A provider outage pauses the episode instead of finishing it, and --resume continues it
where it stopped: against a loopback model server that fails in the middle of an episode
(HTTP 500, no retries) and then answers again."""
import json
import sqlite3

from argus.agent.optimize import run_episode
from argus.agent.planner import Budget
from argus.agent.providers import load_config
from argus.agent.task import GemmTask
from argus.cli.main import main

from tests.agent.loopback import LoopbackLLM

TASK = GemmTask(4096, 4096, 4096)
FIRST = json.dumps({"technique": "two-consumers",
                    "config": {"BM": 128, "BN": 128, "consumers": 2, "stages": 4,
                               "warp_specialized": True}})
SECOND = json.dumps({"technique": "wide-tile",
                     "config": {"BM": 128, "BN": 256, "consumers": 2, "stages": 4,
                                "warp_specialized": True}})
STOP = json.dumps({"stop": True, "rationale": "good enough"})


def _config(server):
    return load_config(env={"ARGUS_PROVIDER": "openai", "ARGUS_MODEL": "loopback",
                            "ARGUS_BASE_URL": server.root + "/v1", "ARGUS_API_KEY": "k",
                            "ARGUS_MAX_RETRIES": "0", "ARGUS_TIMEOUT_S": "10"})


def _status(db, episode):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT status FROM episodes WHERE id=?", (episode,)).fetchone()[0]


def test_an_outage_pauses_the_episode_and_resume_continues_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    db = tmp_path / "episodes.sqlite"
    with LoopbackLLM([FIRST, 500, SECOND, STOP]) as server:
        first = run_episode(TASK, _config(server), evaluator="cpu", db=db,
                            budget=Budget(evaluations=10))
        meta = first["summary"]["meta"]
        steps = first["result"].trajectory.steps
        assert meta["paused"] and "--resume" in meta["resume_hint"]
        assert [s.technique for s in steps] == ["start", "two-consumers", "provider-error"]
        assert first["summary"]["stop_reason"].startswith("provider failed")
        assert _status(db, meta["episode"]) == "paused"
        asked_before = len(server.requests)

        second = run_episode(TASK, _config(server), evaluator="cpu", db=db, resume=True,
                             budget=Budget(evaluations=10))
    meta2 = second["summary"]["meta"]
    steps2 = second["result"].trajectory.steps
    assert meta2["episode"] == meta["episode"] and meta2["resumed_steps"] == 2
    assert not meta2["paused"] and _status(db, meta["episode"]) == "done"
    assert [s.index for s in steps2] == [0, 1, 2]
    assert [s.technique for s in steps2] == ["start", "two-consumers", "wide-tile"]
    assert steps2[1].config == steps[1].config               # the search kept, not redone
    assert second["summary"]["stop_reason"].startswith("planner stopped: good enough")
    # the first request after the outage carries the steps made before it
    resumed_prompt = server.user_prompts()[asked_before]
    assert "two-consumers" in resumed_prompt and "provider-error" not in resumed_prompt
    with sqlite3.connect(db) as conn:
        stored = [json.loads(b)["technique"] for (b,) in conn.execute(
            "SELECT body FROM steps WHERE episode=? ORDER BY idx", (meta["episode"],))]
    assert stored == ["start", "two-consumers", "wide-tile"]


def test_the_command_says_paused_and_exits_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["optimize", "gemm", "--shape", "4096x4096x4096", "--evaluator", "cpu",
            "--space", "model", "--quiet", "--out", str(tmp_path / "o"),
            "--db", str(tmp_path / "db.sqlite")]
    with LoopbackLLM([FIRST, 500, STOP]) as server:
        for name, value in (("ARGUS_PROVIDER", "openai"), ("ARGUS_MODEL", "loopback"),
                            ("ARGUS_BASE_URL", server.root + "/v1"),
                            ("ARGUS_MAX_RETRIES", "0")):
            monkeypatch.setenv(name, value)
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "paused: provider failed" in err and "--resume" in err
        assert main(argv + ["--resume"]) == 0
    out = capsys.readouterr().out
    assert "planner stopped" in out
