"""The kernels mutation testing runs on: file, kernel, specialisation (parse overrides),
the small shapes the interpreter runs (with tails where the kernel allows them; the
differential fuzzer, differential.py, also runs `more_shapes`) and the per-kernel name
swaps of the reduction operator."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOG2E = 1.4426950408889634


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
    more_shapes: tuple = ()          # further shapes the differential fuzzer runs (tails)
    zeroed: tuple = ()               # outputs the kernel adds into: they start at zero
    problem: str = ""                # a function of tools/mutation/problems.py that makes
                                     # the inputs and outputs (default: the file's reference)

    @property
    def all_shapes(self) -> tuple:
        """`shapes` first, then `more_shapes`: what the differential fuzzer runs."""
        return (dict(self.shapes), *(dict(s) for s in self.more_shapes))

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
_LIB_TAIL = {"M": 136, "N": 72, "K": 136}        # one tile row + 8, KT = 3 = S
_SPLITK = {"BLOCKS": 2, "BN": 128, "ACC": "wgmma_acc_m64n128", "S": 3, "SPLIT": 2}

_ATTN = {"DT": "bf16", "HD": 64, "G": 2, "CAUSAL": 0, "BN": 64, "S": 2,
         "SCALE_LOG2": LOG2E / 8.0}

TARGETS = {
    "gemm_nt": Target("gemm_nt", "argus/kernels/gemm.py", "gemm_nt", _LIB_SHAPES, _LIB,
                      more_shapes=(_LIB_TAIL,)),
    "gemm_nn": Target("gemm_nn", "argus/kernels/gemm.py", "gemm_nn", _LIB_SHAPES, _LIB,
                      more_shapes=(_LIB_TAIL,)),
    # the library GEMM's cluster branch: 2 clusters of 2 blocks (B multicast, remote
    # arrives) with the TMA-store epilogue walk 6 cluster tiles; M = 392 leaves the last
    # cluster row's second block 8 rows deep; KT = 4 > S = 3
    "gemm_nn_cluster": Target("gemm_nn_cluster", "argus/kernels/gemm.py", "gemm_nn",
                              {"M": 392, "N": 136, "K": 200},
                              {"BLOCKS": 4, "CM": 2, "BN": 64, "ACC": "wgmma_acc_m64n64",
                               "S": 3, "EPILOGUE": "smem_tma"},
                              more_shapes=({"M": 136, "N": 72, "K": 72},)),
    # the epilogue in 64-column blocks through two buffers (tma_store_wait(1)): 2 blocks
    # over 2 x 3 tiles of 128 x 256 (each buffer reused within a tile and across tiles),
    # tails in M, N and K; KT = 5 > S = 3
    "gemm_nt_chunks": Target("gemm_nt_chunks", "argus/kernels/gemm.py", "gemm_nt",
                             {"M": 200, "N": 520, "K": 264},
                             {"BLOCKS": 2, "BN": 256, "ACC": "wgmma_acc_m64n256", "S": 3,
                              "EPILOGUE": "tma_chunks"},
                             more_shapes=({"M": 72, "N": 264, "K": 136},)),
    # the example GEMM needs whole tiles: 2 blocks x 2 tiles each, KT = 5 > S = 4
    "gemm": Target("gemm", "examples/gemm.py", "gemm", {"M": 256, "N": 512, "K": 320},
                   {"BLOCKS": 2}, more_shapes=({"M": 384, "N": 256, "K": 128},)),
    "copy": Target("copy", "examples/copy.py", "copy", {"M": 128, "N": 192},
                   more_shapes=({"M": 192, "N": 64},)),
    "flash_fwd": Target("flash_fwd", "examples/flash_attention.py", "flash_fwd", {"T": 256},
                        more_shapes=({"T": 384},),
                        name_swaps=(("m_new", "m_i"), ("m_i", "m_new"), ("masked", "scores"),
                                    ("p", "masked"), ("l_i", "alpha"))),
    # two persistent blocks walk all the experts' tiles; KT = 5 > S = 4
    "moe_grouped": Target("moe_grouped", "examples/moe.py", "moe_grouped",
                          {"T": 300, "K": 320, "N": 256, "EN": 2048}, {"BLOCKS": 2},
                          more_shapes=({"T": 100, "K": 128, "N": 128, "EN": 1024},)),
    # split K at SPLIT = 2, BN = 128, S = 3 on two persistent blocks: KT = 5 gives KS = 3
    # (the last split's last box past K reads TMA zeros); tails in M, N and K
    "gemm_nt_splitk": Target("gemm_nt_splitk", "argus/kernels/gemm_splitk.py",
                             "gemm_nt_splitk", {"M": 200, "N": 136, "K": 264}, _SPLITK,
                             zeroed=("W",), more_shapes=({"M": 72, "N": 72, "K": 136},)),
    "gemm_nn_splitk": Target("gemm_nn_splitk", "argus/kernels/gemm_splitk.py",
                             "gemm_nn_splitk", {"M": 200, "N": 136, "K": 264}, _SPLITK,
                             zeroed=("W",), more_shapes=({"M": 72, "N": 72, "K": 136},)),
    "moe_gate_up": Target("moe_gate_up", "examples/moe_gate_up.py", "moe_gate_up",
                          {"T": 64, "K": 128, "F": 128, "EF": 1024, "P": 200}, {"BLOCKS": 2},
                          more_shapes=({"T": 32, "K": 64, "F": 256, "EF": 2048, "P": 72},)),
    # the library's grouped GEMMs (argus.ops.moe's kernels) at 8 experts on two persistent
    # blocks: the warpgroup gather, empty experts, tails past each expert's count
    "moe_gate_up_lib": Target("moe_gate_up_lib", "argus/kernels/moe_gate_up.py", "moe_gate_up",
                              {"T": 64, "K": 128, "F": 128, "EF": 1024, "P": 200},
                              {"BLOCKS": 2, "GATHER": "warpgroup"},
                              more_shapes=({"T": 32, "K": 64, "F": 256, "EF": 2048, "P": 72},)),
    "moe_down_lib": Target("moe_down_lib", "argus/kernels/moe_down.py", "moe_down",
                           {"T": 200, "K": 128, "N": 128, "EN": 1024}, {"BLOCKS": 2},
                           more_shapes=({"T": 72, "K": 192, "N": 256, "EN": 2048},)),
    "moe_combine": Target("moe_combine", "examples/moe_combine.py", "moe_combine",
                          {"T": 128, "N": 128, "P": 256},
                          more_shapes=({"T": 64, "N": 192, "P": 128},)),
    "moe_route": Target("moe_route", "examples/moe_route.py", "moe_route", {"T": 128, "P": 256},
                        more_shapes=({"T": 64, "P": 128},)),
    # the library router (argus/kernels/moe_route.py, argus.ops.moe's three kernels) at
    # 8 experts, top 2, renormalised, on router-made inputs (tools/mutation/problems.py:
    # each token's 2 distinct experts, j-major, positive gates; `kind` names the logits):
    # moe_topk at BT = 16 (128 | BT * E, as route_block_tokens picks) over 2 and 3 blocks
    # with tails, integer logits (ties, rows all equal) and underflowing ones
    "moe_topk_lib": Target("moe_topk_lib", "argus/kernels/moe_route.py", "moe_topk",
                           {"T": 21, "kind": "random"}, {"E": 8, "TOPK": 2, "RENORM": 1,
                                                         "BT": 16},
                           problem="moe_topk", more_shapes=({"T": 40, "kind": "ties+large"},)),
    # moe_count and moe_place in 128-entry tiles: P = 200 (two tiles, a tail of 72) with an
    # empty expert (1) and one every token chose (7), and P = 300 (three tiles)
    "moe_count_lib": Target("moe_count_lib", "argus/kernels/moe_route.py", "moe_count",
                            {"T": 100, "kind": "empty+all"}, {"E": 8, "TOPK": 2, "BS": 128},
                            problem="moe_count",
                            more_shapes=({"T": 150, "kind": "ties"},)),
    # moe_place from moe_count's counts: one tile a choice at T = 70, two (a tail of 2) at
    # T = 130
    "moe_place_lib": Target("moe_place_lib", "argus/kernels/moe_route.py", "moe_place",
                            {"T": 70, "kind": "empty+all"}, {"E": 8, "TOPK": 2, "BS": 128},
                            problem="moe_place",
                            more_shapes=({"T": 130, "kind": "ties"},)),
    # moe_place counting the entries itself (COUNT_HERE = 1, the decode router): `counts`
    # is an output (poisoned, compared); the experts below e counted over P in 128-entry
    # tiles (two at T = 70, three at T = 130, one at the decode batch T = 3)
    "moe_place_here_lib": Target("moe_place_here_lib", "argus/kernels/moe_route.py",
                                 "moe_place", {"T": 70, "kind": "empty+all"},
                                 {"E": 8, "TOPK": 2, "BS": 128, "COUNT_HERE": 1},
                                 problem="moe_place",
                                 more_shapes=({"T": 130, "kind": "ties"},
                                              {"T": 3, "kind": "random"})),
    # the library attention (one head block of 128 queries; BN = 64 and two stages so the
    # ring wraps): the split key loop (MASK="edge") with a masked tail block, GQA 2, two
    # heads (segments), SQ off the block (padding query rows); a second shape with one
    # whole key block only (the masked part empty)
    "attention_bhsd": Target("attention_bhsd", "argus/kernels/attention.py", "attention_bhsd",
                             {"B": 1, "HQ": 2, "HK": 1, "SQ": 70, "SK": 150}, _ATTN,
                             problem="attention",
                             more_shapes=({"B": 2, "HQ": 2, "HK": 1, "SQ": 33, "SK": 64},)),
    # bshd at G = 1 (with G > 1 its column-blocked heads are not verified: the GQA
    # contraction compares absolute columns, docs/design/verifier-attention.md)
    "attention_bshd": Target("attention_bshd", "argus/kernels/attention.py", "attention_bshd",
                             {"B": 2, "HQ": 2, "HK": 2, "SQ": 40, "SK": 100},
                             {**_ATTN, "G": 1}, problem="attention",
                             more_shapes=({"B": 1, "HQ": 3, "HK": 3, "SQ": 65, "SK": 64},)),
    # the persistent grid (PERSIST, the library's default when not causal): two blocks walk
    # four and eight (head, query block) tiles, the ring's positions and Q's barrier carried
    # from tile to tile
    "attention_persist": Target("attention_persist", "argus/kernels/attention.py",
                                "attention_bhsd", {"B": 2, "HQ": 2, "HK": 1, "SQ": 70, "SK": 150},
                                {**_ATTN, "S": 3, "PERSIST": 1, "BLOCKS": 2},
                                problem="attention",
                                more_shapes=({"B": 1, "HQ": 4, "HK": 2, "SQ": 129, "SK": 64},)),
}
