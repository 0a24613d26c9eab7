// argus_reduce.cuh: global reductions (red.global.add), for split-K partial sums.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// Atomically add (a, b) to the two consecutive floats at `addr` (8-byte aligned), sm_90.
__device__ __forceinline__ void red_add_f32x2(float* addr, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(addr), "f"(a), "f"(b) : "memory");
}

/// Atomically add `a` to the float at `addr`.
__device__ __forceinline__ void red_add_f32(float* addr, float a) {
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(addr), "f"(a) : "memory");
}

}  // namespace argus
