"""Scheduler outcomes: deadlock reports, step budget, named and cluster barriers, misuse."""

import numpy as np
import pytest

from argus.interp.machine import (Completed, Deadlock, Faulted, Machine, SchedulerError,
                                  StepBudgetExceeded)


def test_wait_on_a_phase_that_never_completes_is_a_deadlock_not_a_hang():
    m = Machine(seed=4)
    full = m.mbarrier("full[0]", count=1)

    def consumer():
        yield m.wait(full, 0)   # nobody ever arrives

    m.spawn("consumer", consumer())
    result = m.run()
    assert isinstance(result, Deadlock)
    (blocked,) = result.blocked
    assert (blocked.agent, blocked.barrier, blocked.parity) == ("consumer", "full[0]", 0)
    assert "consumer waits on mbarrier 'full[0]' parity 0" in str(result)


def test_deadlock_waits_while_a_pending_copy_could_still_release_the_waiter():
    from argus.interp.machine import GlobalTensor
    m = Machine(seed=1)
    full = m.mbarrier("full", count=1)
    buf = m.smem.alloc("buf", "fp32", (4, 4))
    src = GlobalTensor.from_values("X", np.ones((4, 4)), "fp32")

    def producer():
        yield m.arrive(full, expect_tx=64)
        yield m.tma_load(src, (0, 0), buf.whole(), full)

    def consumer():
        yield m.wait(full, 0)
        return (yield m.ld_shared(buf.whole()))

    m.spawn("producer", producer())
    m.spawn("consumer", consumer())
    assert isinstance(m.run(), Completed)


def test_two_agents_waiting_on_each_other_are_both_named():
    m = Machine()
    ping, pong = m.mbarrier("ping", count=1), m.mbarrier("pong", count=1)

    def left():
        yield m.wait(pong, 0)
        yield m.arrive(ping)

    def right():
        yield m.wait(ping, 0)
        yield m.arrive(pong)

    m.spawn("left", left())
    m.spawn("right", right())
    result = m.run()
    assert isinstance(result, Deadlock)
    assert {(b.agent, b.barrier) for b in result.blocked} == {("left", "pong"), ("right", "ping")}


def test_spinning_try_wait_exhausts_the_step_budget():
    m = Machine(step_budget=500)
    bar = m.mbarrier("never", count=1)

    def spinner():
        while not (yield m.try_wait(bar, 0)):
            pass

    m.spawn("spinner", spinner())
    result = m.run()
    assert isinstance(result, StepBudgetExceeded) and result.steps == 500
    assert "spinner" in str(result) and "livelock" in str(result)


def test_try_wait_returns_true_once_the_phase_completes():
    m = Machine(seed=2)
    bar = m.mbarrier("b", count=1)
    polls = []

    def spinner():
        while True:
            done = yield m.try_wait(bar, 0)
            polls.append(done)
            if done:
                return

    def arriver():
        yield m.arrive(bar)

    m.spawn("spinner", spinner())
    m.spawn("arriver", arriver())
    assert isinstance(m.run(), Completed)
    assert polls[-1] is True and polls.count(True) == 1


def test_named_barrier_releases_only_when_all_threads_arrived():
    m = Machine(seed=0)
    order = []

    def role(name, delay):
        def program():
            for _ in range(delay):
                yield m.fence_proxy_async()  # any instruction: a step of work
            order.append(f"{name} arrives")
            yield m.bar_sync(3, 384)
            order.append(f"{name} passes")
        return program()

    for i, delay in enumerate([0, 5, 9]):
        m.spawn(f"wg{i}", role(f"wg{i}", delay))
    assert isinstance(m.run(), Completed)
    assert all(e.endswith("arrives") for e in order[:3]) and len(order) == 6


def test_a_bar_sync_instruction_can_be_yielded_again_in_a_loop():
    m = Machine(seed=1)
    rounds = []

    def role(name):
        sync = m.bar_sync(4, 256)
        for r in range(3):
            yield sync
            rounds.append((r, name))

    m.spawn("a", role("a"))
    m.spawn("b", role("b"))
    assert isinstance(m.run(), Completed)
    assert [r for r, _ in rounds] == [0, 0, 1, 1, 2, 2]
    assert m.named[("", 4)].generation == 3


def test_named_barrier_short_of_threads_deadlocks():
    m = Machine()

    def role():
        yield m.bar_sync(1, 256)

    m.spawn("wg0", role())
    result = m.run()
    assert isinstance(result, Deadlock)
    assert result.blocked[0].barrier == "named barrier 1"
    assert "128 threads arrived" in str(result)


def test_named_barrier_count_disagreement_is_a_fault():
    m = Machine()
    m.spawn("a", iter([m.bar_sync(1, 256)]))
    m.spawn("b", iter([m.bar_sync(1, 384)]))
    result = m.run()
    assert isinstance(result, Faulted) and "disagree on the thread count" in str(result.error)


def test_cluster_barrier_arrive_and_wait():
    m = Machine(seed=5)
    cluster = m.cluster_barrier(participants=2)
    seen = []

    def cta(name):
        yield m.cluster_arrive(cluster)
        yield m.cluster_wait(cluster)
        seen.append(name)

    m.spawn("cta0", cta("cta0"))
    m.spawn("cta1", cta("cta1"))
    assert isinstance(m.run(), Completed) and sorted(seen) == ["cta0", "cta1"]

    m = Machine()
    cluster = m.cluster_barrier(participants=2)
    m.spawn("alone", iter([m.cluster_arrive(cluster), m.cluster_wait(cluster)]))
    result = m.run()
    assert isinstance(result, Deadlock) and "1 of 2 arrived" in str(result)


def test_misuse_of_the_machine_is_named():
    m = Machine()
    m.spawn("bad", iter(["not an instruction"]))
    result = m.run()
    assert isinstance(result, Faulted) and isinstance(result.error, SchedulerError)
    assert "yielded 'not an instruction'" in str(result.error)
    with pytest.raises(SchedulerError, match="runs once"):
        m.run()
    with pytest.raises(SchedulerError, match="spawned twice"):
        m2 = Machine()
        m2.spawn("x", iter([]))
        m2.spawn("x", iter([]))


def test_uninitialised_barrier_fault_names_agent_and_barrier():
    m = Machine(seed=9)
    bar = m.mbarrier("empty[1]")          # created, never initialised

    def producer():
        yield m.arrive(bar)

    m.spawn("producer", producer())
    result = m.run()
    assert isinstance(result, Faulted)
    assert "producer at step 1 (seed 9)" in str(result.error)
    assert "mbarrier 'empty[1]' before mbarrier.init" in str(result.error)


def test_named_barriers_of_two_ctas_are_distinct():
    """The CTAs of a cluster share one machine, but bar.sync 1 of CTA 0 is not CTA 1's: two
    warpgroups of different CTAs must not complete a 256-thread barrier together."""
    m = Machine(seed=1)
    m.spawn("cta0.wg1", iter([m.bar_sync(1, 256, "cta0.")]))
    m.spawn("cta1.wg1", iter([m.bar_sync(1, 256, "cta1.")]))
    result = m.run()
    assert not isinstance(result, Completed)
    assert "cta0.named barrier 1" in str(result) or "cta0." in repr(result)
