"""The GEMM configurations worth enumerating, and the hand-picked ones from the literature.

`grid()` is a coarse product of the knobs (a few thousand points) used to find the cost
model's optimum in tests and to report how close the planner got. `HAND_PICKED` are the
configurations published Hopper GEMMs ship with; on a GPU the best of them is the bar the
planner must reach (issue 8: 90% of the best hand-picked configuration).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator

from argus.agent.gemm_config import GemmConfig

HAND_PICKED = {
    # fast.cu matmul_12 (Pranjal Shankhdhar): 128x256x64, 1 producer + 2 consumers, 2-CTA
    # cluster multicasting B, persistent, TMA-store epilogue (3-stage ring there).
    "fastcu_128x256_s3_cluster2": GemmConfig(BM=128, BN=256, BK=64, stages=3, consumers=2,
                                             warp_specialized=True, cluster_m=2, raster="n",
                                             group=8, persistent=True, epilogue="smem_tma"),
    # ThunderKittens kernels/gemm/bf16_h100: 128x256, 4 stages, persistent, SUPER_M=12
    # grouped raster (group 8 here, the nearest admissible), TMA store.
    "tk_128x256_s4": GemmConfig(BM=128, BN=256, BK=64, stages=4, consumers=2,
                                warp_specialized=True, raster="n", group=8, persistent=True,
                                epilogue="smem_tma"),
    # A CUTLASS 3.x sm90 cooperative default: 128x128x64 tile, 2 consumers, cluster 2x1.
    "cutlass_coop_128x128": GemmConfig(BM=128, BN=128, BK=64, stages=4, consumers=2,
                                       warp_specialized=True, cluster_m=2, persistent=True,
                                       epilogue="smem_tma"),
    # The Triton tutorial style config measured on this project's H200 (0.94-0.97x cuBLAS).
    "triton_128x256_s4": GemmConfig(BM=128, BN=256, BK=64, stages=4, consumers=2),
}


def grid(split_k: tuple = (1, 2, 4)) -> Iterator[GemmConfig]:
    for BM, BN, BK, S, C, ws, (cm, cn), g, pers, sk, epi in itertools.product(
            (64, 128, 256), (64, 128, 192, 256), (32, 64, 128), (2, 3, 4, 5, 6),
            (1, 2), (False, True), ((1, 1), (2, 1), (1, 2)), (1, 8), (False, True), split_k,
            ("direct", "smem_tma")):
        yield GemmConfig(BM=BM, BN=BN, BK=BK, stages=S, consumers=C, warp_specialized=ws,
                         cluster_m=cm, cluster_n=cn, group=g, persistent=pers, split_k=sk,
                         epilogue=epi)
