"""Parameter annotations: dtypes, global tensors with symbolic shapes, sizes, constants."""

from __future__ import annotations


class DTypeName(str):
    """A dtype as the surface names it (bf16, fp16, fp32, fp8e4m3, int32)."""


bf16 = DTypeName("bf16")
fp16 = DTypeName("fp16")
fp32 = DTypeName("fp32")
fp8e4m3 = DTypeName("fp8e4m3")
int32 = DTypeName("int32")


class Tensor:
    """`A: Tensor["M", "K", bf16]`: a global tensor, row-major, dims are symbol names
    (sizes known at launch) or ints. Each element is tagged (A, i, j) by default."""

    def __class_getitem__(cls, item):
        return (cls, item)


class Scalar:
    """`n: Scalar[int32]`: a runtime scalar argument, uniform across the grid."""

    def __class_getitem__(cls, item):
        return (cls, item)


class Dim:
    """`SQ: Dim`: a size given as an int argument at launch, a shape symbol like the dims of
    a `Tensor` annotation (positive; it may also name tensor dims, which must then agree)."""


class const:
    """`BM: const = 128`: a compile-time constant, folded into shapes and offsets."""
