"""A kernel call of a ModelNew's glue, `kern(A, B, C, BN=128)`, checked against the kernel it
names: the same rules whether the interpreter (candidate_child.py) or the GPU
(gpu_child.py) runs it."""
from __future__ import annotations


def kernel_arguments(probe, name: str, args: list, where: str, is_tensor,
                     failed) -> tuple[list, list]:
    """(the tensors, the kernel's tensor parameters) of a glue call `name(*args)`: as many
    tensors as the kernel has tensor parameters, constants only by keyword; else
    `failed("launch", message)` is raised."""
    from argus.ir.types import GlobalTensorType

    tensors = [a for a in args if is_tensor(a)]
    scalars = [a for a in args if not is_tensor(a)]
    params = [p for p in probe.params if isinstance(p.type, GlobalTensorType)]
    if len(tensors) != len(params):
        raise failed("launch", f"kernel {name}{where} takes {len(params)} tensors "
                               f"({', '.join(p.name for p in params)}), got {len(tensors)}")
    if scalars:
        raise failed("launch", f"kernel {name}{where}: pass constants by keyword (BN=128), "
                               f"not positionally")
    return tensors, params
