from argus.agent.episodes import EpisodeStore
from argus.agent.evaluators import CpuEvaluator
from argus.agent.optimize import run_episode
from argus.agent.planner import Budget, IcrlPlanner
from argus.agent.providers import ProviderConfig
from argus.agent.providers.embedded import EmbeddedProvider
from argus.agent.task import GemmTask


def test_interrupted_run_resumes_where_it_stopped(tmp_path, task4k):
    db = tmp_path / "ep.sqlite"
    store = EpisodeStore(db)
    episode, traj = store.open_episode(task4k, "embedded", "cpu-cost-model", traj_start(), False)
    planner = IcrlPlanner(EmbeddedProvider(), CpuEvaluator(), task4k, budget=Budget(evaluations=4),
                          on_step=lambda step, t: store.append(episode, step))
    first = planner.run(traj)              # "interrupted": never finished
    store.close()
    assert len(first.trajectory.steps) == 4

    run = run_episode(task4k, ProviderConfig(), evaluator="cpu", budget=Budget(evaluations=8),
                      db=db, resume=True)
    steps = run["result"].trajectory.steps
    assert run["summary"]["meta"]["resumed_steps"] == 4
    assert [s.to_json() for s in steps[:4]] == [s.to_json() for s in first.trajectory.steps]
    assert len(steps) == 8 and run["result"].evaluations == 8
    # The same 8 steps as an uninterrupted run.
    fresh = run_episode(task4k, ProviderConfig(), evaluator="cpu", budget=Budget(evaluations=8),
                        db=False)
    assert [s.config.key() for s in steps] == \
           [s.config.key() for s in fresh["result"].trajectory.steps]


def traj_start():
    from argus.agent.gemm_config import SMALLEST
    return SMALLEST


def test_finished_episodes_become_lessons_for_similar_shapes(tmp_path):
    db = tmp_path / "ep.sqlite"
    done = run_episode(GemmTask(4096, 4096, 8192), ProviderConfig(), evaluator="cpu",
                       budget=Budget(evaluations=6), db=db)
    run_episode(GemmTask(256, 256, 256), ProviderConfig(), evaluator="cpu",
                budget=Budget(evaluations=2), db=db)
    store = EpisodeStore(db)
    lessons = store.lessons(GemmTask(4096, 4096, 4096), "cpu-cost-model")
    store.close()
    assert [l["shape"] for l in lessons] == ["4096x4096x8192", "256x256x256"]
    assert lessons[0]["config"] == done["summary"]["best_config"]
    # The next episode sees the lesson in its context and starts from it.
    run = run_episode(GemmTask(4096, 4096, 4096), ProviderConfig(), evaluator="cpu",
                      budget=Budget(evaluations=2), db=db)
    assert run["result"].trajectory.steps[1].technique.startswith("lesson:4096x4096x8192")
