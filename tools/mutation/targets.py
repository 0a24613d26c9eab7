"""The kernels mutation testing runs on: file, kernel, specialisation (parse overrides),
the small shapes the interpreter runs (with tails where the kernel allows them) and the
per-kernel name swaps of the reduction operator."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Target:
    name: str                        # "gemm_nt": prefix of mutant ids
    path: str                        # relative to the repository root
    kernel: str
    shapes: dict = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)
    stage: str = "S"
    name_swaps: tuple = ()
    step_budget: int = 20_000        # ~70x what the correct kernels take here

    @property
    def display_path(self) -> str:
        return self.path

    def source(self) -> str:
        return (ROOT / self.path).read_text()


# The library GEMM at BN = 128 and S = 3 (KT = 5 at K = 264: the ring wraps, and a tile
# starts mid-ring, so g and k differ in stage and phase), two persistent
# blocks over 2 x 2 tiles (the phases carry across tiles), tails in M, N and K.
_LIB = {"BLOCKS": 2, "BN": 128, "ACC": "wgmma_acc_m64n128", "S": 3}
_LIB_SHAPES = {"M": 200, "N": 200, "K": 264}

TARGETS = {
    "gemm_nt": Target("gemm_nt", "argus/kernels/gemm.py", "gemm_nt", _LIB_SHAPES, _LIB),
    "gemm_nn": Target("gemm_nn", "argus/kernels/gemm.py", "gemm_nn", _LIB_SHAPES, _LIB),
    # the library GEMM's cluster branch: 2 clusters of 2 blocks (B multicast, remote
    # arrives) with the TMA-store epilogue walk 6 cluster tiles; M = 392 leaves the last
    # cluster row's second block 8 rows deep; KT = 4 > S = 3
    "gemm_nn_cluster": Target("gemm_nn_cluster", "argus/kernels/gemm.py", "gemm_nn",
                              {"M": 392, "N": 136, "K": 200},
                              {"BLOCKS": 4, "CM": 2, "BN": 64, "ACC": "wgmma_acc_m64n64",
                               "S": 3, "EPILOGUE": "smem_tma"}),
    # the epilogue in 64-column blocks through two buffers (tma_store_wait(1)): 2 blocks
    # over 2 x 3 tiles of 128 x 256 (each buffer reused within a tile and across tiles),
    # tails in M, N and K; KT = 5 > S = 3
    "gemm_nt_chunks": Target("gemm_nt_chunks", "argus/kernels/gemm.py", "gemm_nt",
                             {"M": 200, "N": 520, "K": 264},
                             {"BLOCKS": 2, "BN": 256, "ACC": "wgmma_acc_m64n256", "S": 3,
                              "EPILOGUE": "tma_chunks"}),
    # the example GEMM needs whole tiles: 2 blocks x 2 tiles each, KT = 5 > S = 4
    "gemm": Target("gemm", "examples/gemm.py", "gemm", {"M": 256, "N": 512, "K": 320},
                   {"BLOCKS": 2}),
    "copy": Target("copy", "examples/copy.py", "copy", {"M": 128, "N": 192}),
    "flash_fwd": Target("flash_fwd", "examples/flash_attention.py", "flash_fwd", {"T": 256},
                        name_swaps=(("m_new", "m_i"), ("m_i", "m_new"), ("masked", "scores"),
                                    ("p", "masked"), ("l_i", "alpha"))),
    # two persistent blocks walk all the experts' tiles; KT = 5 > S = 4
    "moe_grouped": Target("moe_grouped", "examples/moe.py", "moe_grouped",
                          {"T": 300, "K": 320, "N": 256, "EN": 2048}, {"BLOCKS": 2}),
}
