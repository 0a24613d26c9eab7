"""One way every library op becomes a PyTorch op: `register_op("matmul", impl, fake, ...)`
defines the custom op `argus::matmul` with torch.library (its schema read from `impl`'s type
hints), its fake implementation (shapes, dtypes and strides of the result without computing
it: what FakeTensorMode, meta tensors and torch.compile's tracing run), and, when given, its
backward. torch.compile(fullgraph=True) then keeps the op in the graph as one node, and CUDA
graphs capture it as long as `impl` launches on the current stream and allocates through
torch (the library launchers do both). Attention and MoE register the same way.
"""

from __future__ import annotations

NAMESPACE = "argus"


def register_op(name: str, impl, fake, backward=None, setup_context=None):
    """The op `argus::<name>`: `impl` computes (type-hinted: Tensor, bool, int, ...), `fake`
    returns empty results of the right shape, dtype and strides; `backward(ctx, *grads)` with
    `setup_context(ctx, inputs, output)` makes it differentiable."""
    import torch

    op = torch.library.custom_op(f"{NAMESPACE}::{name}", impl, mutates_args=())
    op.register_fake(fake)
    if backward is not None:
        op.register_autograd(backward, setup_context=setup_context)
    return op


def plain_eager(*tensors) -> bool:
    """An eager call on real tensors that autograd does not record (none needs a gradient,
    or grad mode is off) and that torch.compile is not tracing: the op's dispatch would only
    add host time, so the library calls its computation directly. (Plain loops: this runs
    on every call, where a generator under any() costs a microsecond more.)"""
    import torch

    tensor = torch.Tensor
    for t in tensors:
        if type(t) is not tensor or t.is_meta:
            return False
    if torch.is_grad_enabled():
        for t in tensors:
            if t.requires_grad:
                return False
    return not torch.compiler.is_compiling()
