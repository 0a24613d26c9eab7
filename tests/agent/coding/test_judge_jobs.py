"""A round's samples judged side by side on a backend: the same steps, outcomes and best as
one by one, each candidate's check and run a job of its own (the candidates per worker are
what the run's report shows); a sample rejected by its check is never run."""
from argus.agent.coding.kernel_planner import KernelPlanner
from argus.agent.parallel import LocalPoolBackend, SerialBackend
from argus.agent.planner import Budget

from tests.agent.scripted import ScriptedProvider

from tests.agent.coding.replies import SLOW, STOP
from tests.agent.coding.replies import file_reply as _file


def _script():
    slow = SLOW.read_text()
    fast = slow.replace("S: const = 1,", "S: const = 2,")
    broken = slow.replace("wgmma_wait(0)", "wgmma_wait(5)", 1)
    return [_file(fast, "two-stage"), _file(broken, "broken"), STOP, STOP], fast


def _run(attention, tmp_path, backend):
    script, fast = _script()
    planner = KernelPlanner(ScriptedProvider(script), attention, budget=Budget(evaluations=5),
                            samples=2, work_dir=str(tmp_path), backend=backend)
    return planner.run(), fast


def _summary(run):
    return [(s.index, s.technique, s.outcome.status, s.outcome.time_ms) for s in run.steps]


def test_side_by_side_judging_gives_the_serial_result(attention, tmp_path):
    serial, fast = _run(attention, tmp_path / "serial", None)
    with LocalPoolBackend(workers=2) as pool:
        parallel, _ = _run(attention, tmp_path / "pool", pool)
        jobs = pool.workers()
    assert _summary(parallel) == _summary(serial)
    assert parallel.best.index == 1 and parallel.best_source == fast
    assert parallel.steps[2].outcome.status != "ok"           # the broken sample
    # two checks and one run (the broken sample is not run), on the pool's processes
    assert sum(n["verify"] for n in jobs.values()) == 3
    assert all(":" in w for w in jobs)


def test_a_round_of_one_stays_in_this_process(attention, tmp_path):
    backend = SerialBackend()
    script, _ = _script()
    planner = KernelPlanner(ScriptedProvider(script[:1] + [STOP]), attention,
                            budget=Budget(evaluations=3), samples=1, work_dir=str(tmp_path),
                            backend=backend)
    planner.run()
    assert backend.workers() == {}
