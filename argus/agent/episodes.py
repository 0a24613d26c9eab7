"""Episodes in SQLite: every step is written as it happens, so an interrupted run resumes,
and finished episodes give lessons (their best configuration) to similar later tasks.

An episode is "running" while it runs, "paused" when its provider failed (an outage: the
run stopped, but nothing about the search is over) and "done" when a budget ran out or the
planner stopped. `--resume` continues the latest running or paused episode of the same key
from its last search step (the provider-error step that paused it is dropped).

Default database: $ARGUS_AGENT_DB, else out/agent/episodes.sqlite under the working dir.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from pathlib import Path

from argus.agent.gemm_config import GemmConfig
from argus.agent.task import GemmTask
from argus.agent.trajectory import Step, Trajectory

SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, op TEXT NOT NULL,
  task TEXT NOT NULL, provider TEXT NOT NULL, evaluator TEXT NOT NULL, start TEXT NOT NULL,
  status TEXT NOT NULL, created REAL NOT NULL, best_tflops REAL, best_config TEXT);
CREATE TABLE IF NOT EXISTS steps (
  episode INTEGER NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (episode, idx));
"""


OUTAGE = "provider-error"      # the planner's step for a provider that failed


def default_path() -> Path:
    return Path(os.environ.get("ARGUS_AGENT_DB") or Path("out") / "agent" / "episodes.sqlite")


def episode_key(task: GemmTask, provider: str, evaluator: str, start: GemmConfig) -> str:
    return json.dumps([task.describe(), provider, evaluator, start.to_json()], sort_keys=True)


class EpisodeStore:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path))
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def open_episode(self, task: GemmTask, provider: str, evaluator: str, start: GemmConfig,
                     resume: bool) -> tuple[int, Trajectory]:
        """A new episode, or (resume=True) the latest unfinished one of the same key."""
        key = episode_key(task, provider, evaluator, start)
        traj = Trajectory(task, start)
        if resume:
            row = self.db.execute("SELECT id FROM episodes WHERE key=? AND status IN "
                                  "('running', 'paused') ORDER BY id DESC LIMIT 1",
                                  (key,)).fetchone()
            if row:
                for (body,) in self.db.execute("SELECT body FROM steps WHERE episode=? "
                                               "ORDER BY idx", (row[0],)):
                    traj.steps.append(Step.from_json(json.loads(body)))
                while traj.steps and traj.steps[-1].technique == OUTAGE:
                    traj.steps.pop()            # the outage is not a step of the search
                next_idx = traj.steps[-1].index + 1 if traj.steps else 0
                self.db.execute("DELETE FROM steps WHERE episode=? AND idx>=?",
                                (row[0], next_idx))
                self.db.execute("UPDATE episodes SET status='running' WHERE id=?", (row[0],))
                self.db.commit()
                return row[0], traj
        cur = self.db.execute(
            "INSERT INTO episodes (key, op, task, provider, evaluator, start, status, created) "
            "VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
            (key, task.op, json.dumps(task.describe()), provider, evaluator,
             json.dumps(start.to_json()), time.time()))
        self.db.commit()
        return cur.lastrowid, traj

    def append(self, episode: int, step: Step) -> None:
        self.db.execute("INSERT OR REPLACE INTO steps (episode, idx, body) VALUES (?, ?, ?)",
                        (episode, step.index, json.dumps(step.to_json())))
        self.db.commit()

    def finish(self, episode: int, traj: Trajectory) -> None:
        best = traj.best()
        self.db.execute("UPDATE episodes SET status='done', best_tflops=?, best_config=? "
                        "WHERE id=?", (best.outcome.tflops if best else None,
                                       json.dumps(best.config.to_json()) if best else None,
                                       episode))
        self.db.commit()

    def pause(self, episode: int, traj: Trajectory) -> None:
        """The provider failed: the episode stays resumable."""
        self.db.execute("UPDATE episodes SET status='paused' WHERE id=?", (episode,))
        self.db.commit()

    def status(self, episode: int) -> str | None:
        row = self.db.execute("SELECT status FROM episodes WHERE id=?", (episode,)).fetchone()
        return row[0] if row else None

    def lessons(self, task: GemmTask, evaluator: str, limit: int = 3) -> list[dict]:
        """Best configurations of finished episodes of the same op and evaluator, nearest
        shape first (distance: sum of |log ratio| of M, N, K); the same shape excluded."""
        rows = self.db.execute("SELECT task, best_tflops, best_config FROM episodes WHERE "
                               "op=? AND evaluator=? AND status='done' AND best_config IS NOT "
                               "NULL", (task.op, evaluator)).fetchall()
        found = {}
        for task_json, tflops, config in rows:
            other = json.loads(task_json)
            shape = f"{other['M']}x{other['N']}x{other['K']}"
            if shape == task.shape_text:
                continue
            distance = sum(abs(math.log(other[d] / getattr(task, d))) for d in "MNK")
            if shape not in found or found[shape]["tflops"] < tflops:
                found[shape] = {"shape": shape, "tflops": tflops, "config": json.loads(config),
                                "distance": distance}
        return sorted(found.values(), key=lambda l: (l["distance"], l["shape"]))[:limit]
