"""The attention cost model: the mechanisms it states move the estimate the stated way,
and its estimates of the library's defaults are near the H200 times measured in session 8
(docs/perf-log.md: 478, 432 and 290 TFLOP/s)."""
import pytest

from argus.agent.attention.config import AttentionConfig
from argus.agent.attention.cost_model import key_blocks, makespan, predict, rank
from argus.agent.attention.space import AttentionSpace
from argus.agent.attention.task import AttentionTask

D128 = AttentionTask(4, 16, 16, 4096, 4096, 128)
D128C = AttentionTask(4, 16, 16, 4096, 4096, 128, causal=True)
D64 = AttentionTask(16, 16, 16, 1024, 1024, 64)


def ms(cfg, task):
    return predict(cfg, task)["time_ms"]


@pytest.mark.parametrize("task, measured_tflops", [(D128, 478), (D128C, 432), (D64, 290)])
def test_defaults_are_within_25_percent_of_the_measured_times(task, measured_tflops):
    default = AttentionSpace(build_check=False).library_default(task)
    predicted = predict(default, task)["tflops"]
    assert 0.75 * measured_tflops <= predicted <= 1.25 * measured_tflops


def test_each_mechanism_moves_the_estimate_its_way():
    base = AttentionConfig(BN=128, S=2, FOLD_SCALE=0)
    assert ms(AttentionConfig(BN=128, S=2, FOLD_SCALE=1), D128) < ms(base, D128)
    assert ms(AttentionConfig(BN=128, S=2, MASK="all", FOLD_SCALE=0), D128) > ms(base, D128)
    assert ms(AttentionConfig(BN=64, S=2, OVERLAP=1), D128) < ms(AttentionConfig(BN=64, S=2), D128)
    assert ms(AttentionConfig(BN=32, S=2), D128) > ms(AttentionConfig(BN=64, S=2), D128)
    # causal: the longest query blocks first balance the SMs' tails
    assert ms(AttentionConfig(LPT=1, FOLD_SCALE=0), D128C) < ms(base, D128C)
    assert ms(AttentionConfig(LPT=1, FOLD_SCALE=0), D128) == pytest.approx(ms(base, D128))
    # a shallow ring is load-bound on short iterations; SPLIT_KV shortens the wait
    short = AttentionTask(16, 16, 16, 1024, 1024, 64)
    assert ms(AttentionConfig(BN=32, S=2, SPLIT_KV=0), short) > ms(AttentionConfig(BN=32, S=4, SPLIT_KV=0), short)
    assert ms(AttentionConfig(BN=32, S=2, SPLIT_KV=1), short) < ms(AttentionConfig(BN=32, S=2, SPLIT_KV=0), short)


def test_causal_visits_about_half_the_key_blocks():
    total = sum(key_blocks(D128C, 128, bx, 4096, 4096)[0] for bx in range(32))
    assert total == sum(range(1, 33))
    assert key_blocks(D128, 128, 0, 4096, 4096) == (32, 32)
    assert key_blocks(D128C, 128, 3, 4096, 4096) == (4, 3)      # the diagonal block masked


def test_makespan_is_list_scheduling():
    assert makespan([1.0] * 264, 132) == 2.0
    assert makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0
    assert makespan([1.0, 1.0, 1.0, 3.0], 2) == 4.0


def test_rank_orders_fastest_first_and_the_space_spreads():
    configs = list(AttentionSpace(build_check=False).all_accepted(D128))
    ranked = rank(configs, D128)
    assert [m for m, _ in ranked] == sorted(m for m, _ in ranked)
    assert ranked[-1][0] / ranked[0][0] > 1.5       # BN=32 with every block masked is slow


def test_the_query_tile_follows_the_consumer_warpgroups():
    from argus.agent.attention.cost_model import block_clocks, iteration_clocks

    one, two = AttentionConfig(BN=128, S=3, WGS=1), AttentionConfig(BN=128, S=3, WGS=2)
    assert len(block_clocks(one, D128)) == 2 * len(block_clocks(two, D128)) == 64
    assert iteration_clocks(one, D128, False) < iteration_clocks(two, D128, False)


def test_the_launch_order_follows_the_grid_of_lpt_and_head_groups():
    """The list schedule's block order is the kernel's: LPT launches each head's query blocks
    from the last; HEAD_GROUP = g interleaves g heads' blocks of one query block."""
    from argus.agent.attention.cost_model import launch_order
    task = AttentionTask(1, 4, 4, 384, 384, 64, True)
    per_head = [1.0, 2.0, 3.0]
    assert launch_order(AttentionConfig(), task, per_head) == per_head * 4
    assert launch_order(AttentionConfig(LPT=1), task, per_head) == [3.0, 2.0, 1.0] * 4
    assert launch_order(AttentionConfig(LPT=1, HEAD_GROUP=4), task, per_head) == \
        [3.0] * 4 + [2.0] * 4 + [1.0] * 4
