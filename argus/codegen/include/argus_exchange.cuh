// argus_exchange.cuh: moving register values between the threads of a warpgroup, for the row
// reductions, prefix sums and layout conversions the code generator derives: a butterfly
// shuffle inside a warp, and 32-bit shared-memory words with a warpgroup-wide barrier.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// The value of the lane whose index differs from this one's by `mask` (shfl.sync.bfly).
__device__ __forceinline__ float shfl_xor(float x, int mask) {
  return __shfl_xor_sync(0xffffffffu, x, mask);
}

/// Store one float at a .shared-window address.
__device__ __forceinline__ void st_shared_f32(u32 addr, float x) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(x) : "memory");
}

/// Load one float from a .shared-window address.
__device__ __forceinline__ float ld_shared_f32(u32 addr) {
  float x;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(x) : "r"(addr) : "memory");
  return x;
}

/// Barrier of the 128 threads of one warpgroup on named barrier `id` (bar.sync id, 128).
__device__ __forceinline__ void warpgroup_sync(int id) {
  asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}

}  // namespace argus
