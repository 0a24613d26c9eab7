"""The Argus DSL surface: what a kernel author can write. No logic lives here; the
frontend (argus.frontend) gives these names their meaning when it parses a kernel."""

from .kernel import HelperDef, KernelDef, helper, kernel
from .matrix import ldmatrix, stmatrix
from .mbarrier import arrive, expect_tx, mbarrier, mbarrier_init, wait
from .math import (abs, cast, col_of, convert_layout, erf, exp, exp2, gelu, log, log2, maximum,
                   minimum, prefix_sum, row_max, row_min, row_of, row_sum, rsqrt, select,
                   sigmoid, silu, sqrt, tanh)
from .memory import (assign, atomic_add, fragment, gather, gather_cp_async, gather_tma, load,
                     load_indices, scatter, smem, store, tile)
from .scan import element, round_up, segment, to_indices
from .structure import (assume, block_id, cdiv, cluster_rank, elect_one, nbytes, pipeline,
                        role, schedule, walked, warpgroup_index)
from .sync import cluster_sync, fence_mbarrier_init, fence_proxy_async, named_barrier, sync_block
from .tags import add_tag, coord, heads, tag, tag_assert
from .tma import tma_load, tma_store, tma_store_commit, tma_store_wait
from .math import TABLE_STUBS
from .types import Dim, Scalar, Tensor, bf16, const, fp8e4m3, fp16, fp32, int32
from .wgmma import wgmma, wgmma_commit, wgmma_fence, wgmma_wait

FAMILIES = ("structure", "memory", "mbarrier", "tma", "wgmma", "matrix", "sync", "math", "scan",
            "tags")


globals().update(TABLE_STUBS)        # ops of the table with no hand-written stub


def surface_functions() -> dict:
    """Every surface function by name (what the frontend resolves calls against)."""
    return {name: obj for name, obj in globals().items()
            if callable(obj) and hasattr(obj, "__argus_surface__")}
