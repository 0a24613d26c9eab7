import math
from dataclasses import replace

from argus.agent import resources as R
from argus.agent.cost_model import predict, tile_coords, wave_footprint
from argus.agent.gemm_config import SMALLEST, GemmConfig
from argus.agent.search_space import HAND_PICKED, grid
from argus.agent.task import GemmTask

BIG = GemmConfig(BM=128, BN=256, BK=64, stages=4, consumers=2, warp_specialized=True,
                 persistent=True, epilogue="smem_tma")


def _checks(cfg, task):
    return {v.check for v in R.check_resources(cfg, task)}


def test_published_configs_fit_and_exact_smem(task4k):
    assert not R.check_resources(BIG, task4k)
    # 4 x (128x64 + 256x64) x 2 B + 2 x 128 x 64 x 2 B epilogue + 4 x 2 barriers x 8 B
    assert R.smem_bytes(BIG, task4k) == 4 * (128 * 64 + 256 * 64) * 2 + 2 * 128 * 64 * 2 + 64
    assert R.smem_bytes(BIG, task4k) <= R.SMEM_PER_BLOCK


def test_smem_overflow_counterexample_carries_the_numbers(task4k):
    cfg = replace(BIG, stages=5)
    [v] = [v for v in R.check_resources(cfg, task4k) if v.check == "resource.smem"]
    assert v.counterexample["smem_bytes"] == R.smem_bytes(cfg, task4k) > R.SMEM_PER_BLOCK
    assert v.counterexample["stage_bytes"] == (128 * 64 + 256 * 64) * 2
    assert "fewer stages" in v.hint


def test_register_and_wgmma_row_limits(task4k):
    assert "resource.registers" in _checks(replace(BIG, BM=256), task4k)   # 256 acc regs
    assert "wgmma.rows" in _checks(replace(BIG, BM=64), task4k)           # 32 rows each
    assert not R.check_resources(replace(BIG, BM=256, BN=128, consumers=2, stages=3), task4k)


def test_divisibility_and_cluster_counterexamples():
    task = GemmTask(4096, 4000, 4096)
    [v] = [v for v in R.check_resources(replace(BIG, BN=256), task)
           if v.check == "tile.divisibility"]
    assert v.counterexample == {"sizes": {"N": 4000}, "BN": 256, "remainder": 4000 % 256}
    assert "cluster.divisibility" in _checks(replace(SMALLEST, cluster_m=4),
                                              GemmTask(192, 4096, 4096))
    assert "cluster.size" in _checks(replace(SMALLEST, cluster_m=4, cluster_n=4),
                                     GemmTask(4096, 4096, 4096))


def test_predictions_never_beat_the_roofline():
    for task in (GemmTask(4096, 4096, 4096), GemmTask(128, 4096, 4096),
                 GemmTask(256, 8192, 8192)):
        for i, cfg in enumerate(grid()):
            if i % 7 or R.check_resources(cfg, task):
                continue
            p = predict(cfg, task)
            assert 0 < p["roofline_fraction"] < 1.0, (task, cfg)
            assert p["time_s"] > 0 and math.isfinite(p["tflops"])


def test_model_orders_the_published_ladder(task4k):
    tf = {name: predict(cfg, task4k)["tflops"] for name, cfg in HAND_PICKED.items()
          if not R.check_resources(cfg, task4k)}
    smallest = predict(SMALLEST, task4k)["tflops"]
    assert min(tf.values()) > 2.0 * smallest
    ws = predict(replace(BIG, warp_specialized=False), task4k)["tflops"]
    assert predict(BIG, task4k)["tflops"] > ws
    # A deeper ring helps a latency-bound small tile.
    shallow = predict(replace(SMALLEST, stages=2), task4k)["tflops"]
    assert predict(replace(SMALLEST, stages=4), task4k)["tflops"] > shallow


def test_split_k_helps_a_skinny_deep_k_shape():
    task = GemmTask(128, 1024, 16384)
    base = GemmConfig(BM=64, BN=128, BK=64, stages=4, warp_specialized=True)
    assert predict(replace(base, split_k=4), task)["tflops"] > predict(base, task)["tflops"]


def test_grouped_raster_is_a_permutation_and_shrinks_the_wave_footprint():
    coords = {tile_coords(t, 32, 16, "n", 8) for t in range(32 * 16)}
    assert coords == {(m, n) for m in range(32) for n in range(16)}
    rows1, cols1 = wave_footprint(64, 64, "n", 1, 132)
    rows8, cols8 = wave_footprint(64, 64, "n", 8, 132)
    assert rows8 * 128 + cols8 * 256 < rows1 * 128 + cols1 * 256
