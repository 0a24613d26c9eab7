// argus_convert.cuh: register conversions used by epilogues. One cvt per wrapper; 16-bit values
// travel as raw bits (u16 / packed u32) so the generated code needs no cuda_bf16.h.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// Two f32 -> bf16x2, round to nearest even; `lo` lands in the low half (the lower address).
__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi) {
  u32 out;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(out) : "f"(hi), "f"(lo));
  return out;
}

/// Two f32 -> f16x2, round to nearest even; `lo` in the low half.
__device__ __forceinline__ u32 pack_f16x2(float lo, float hi) {
  u32 out;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(out) : "f"(hi), "f"(lo));
  return out;
}

/// One f32 -> bf16 bits, round to nearest even.
__device__ __forceinline__ u16 to_bf16(float x) {
  u16 out;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(out) : "f"(x));
  return out;
}

/// One f32 -> f16 bits, round to nearest even.
__device__ __forceinline__ u16 to_f16(float x) {
  u16 out;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(out) : "f"(x));
  return out;
}

}  // namespace argus

namespace argus {

/// bf16 bits -> f32 (exact).
__device__ __forceinline__ float from_bf16(u16 x) { return __uint_as_float(((u32)x) << 16); }

/// f16 bits -> f32 (exact).
__device__ __forceinline__ float from_f16(u16 x) {
  float out;
  asm("cvt.f32.f16 %0, %1;" : "=f"(out) : "h"(x));
  return out;
}

}  // namespace argus
