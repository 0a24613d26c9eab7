"""Tensor maps for TMA: encoded by the driver once per (spec, tensor address, shape, strides)
and cached, so a repeated launch on the same tensors encodes nothing."""

from __future__ import annotations

from argus.ir.types import DType

from .launch_errors import DriverError, LaunchError

SWIZZLES = {"none": "CU_TENSOR_MAP_SWIZZLE_NONE", "32B": "CU_TENSOR_MAP_SWIZZLE_32B",
            "64B": "CU_TENSOR_MAP_SWIZZLE_64B", "128B": "CU_TENSOR_MAP_SWIZZLE_128B"}
DATA_TYPES = {DType.bf16: "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
              DType.fp16: "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
              DType.fp32: "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
              DType.fp8e4m3: "CU_TENSOR_MAP_DATA_TYPE_UINT8"}


def encode_2d(spec, address: int, rows: int, cols: int, row_stride_bytes: int):
    """A CUtensorMap for a row-major rows x cols tensor; box = spec.box (cols, rows)."""
    from cuda.bindings import driver

    if address % 16:
        raise LaunchError(f"tensor {spec.tensor} starts at {address:#x}, not 16-byte aligned; "
                          "TMA needs 16-byte aligned tensors (use a fresh or .contiguous() tensor)")
    if row_stride_bytes % 16:
        eb = spec.dtype.bits // 8
        raise LaunchError(f"tensor {spec.tensor} has rows of {cols} elements "
                          f"({row_stride_bytes} B), not a multiple of 16 B; TMA needs 16-byte "
                          f"row strides: make its last dimension a multiple of {16 // eb}")
    box_cols, box_rows = spec.box
    err, tmap = driver.cuTensorMapEncodeTiled(
        getattr(driver.CUtensorMapDataType, DATA_TYPES[spec.dtype]), 2, address,
        [driver.cuuint64_t(cols), driver.cuuint64_t(rows)],
        [driver.cuuint64_t(row_stride_bytes)],
        [driver.cuuint32_t(box_cols), driver.cuuint32_t(box_rows)],
        [driver.cuuint32_t(1), driver.cuuint32_t(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(driver.CUtensorMapSwizzle, SWIZZLES[spec.swizzle]),
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise DriverError(f"cuTensorMapEncodeTiled for {spec.tensor} (box {box_cols}x{box_rows},"
                          f" swizzle {spec.swizzle}) failed: {err.name}")
    return tmap


class TensorMapCache:
    def __init__(self, limit: int = 256):
        self._maps: dict[tuple, object] = {}
        self.limit = limit
        self.encoded = 0

    def get(self, spec, address: int, rows: int, cols: int, row_stride_bytes: int):
        key = (spec, address, rows, cols, row_stride_bytes)
        tmap = self._maps.get(key)
        if tmap is None:
            if len(self._maps) >= self.limit:
                self._maps.pop(next(iter(self._maps)))
            tmap = self._maps[key] = encode_2d(spec, address, rows, cols, row_stride_bytes)
            self.encoded += 1
        return tmap
