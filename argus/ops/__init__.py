"""Library operations on torch tensors, backed by DSL kernels compiled by Argus.

With torch installed, importing this package also registers the ops with torch.library
(torch_ops.py: `torch.ops.argus.matmul` and `torch.ops.argus.moe`; attention_torch.py:
`torch.ops.argus.attention`); without it the configuration tables
(gemm_configs.py) stay importable for the agent's cost model."""

from .attention import attention
from .matmul import matmul
from .moe import moe

try:
    import torch  # noqa: F401
except ImportError:      # the ops need torch at call time; their tables do not
    pass
else:
    from . import attention_torch, torch_ops  # noqa: F401

__all__ = ["attention", "matmul", "moe"]
