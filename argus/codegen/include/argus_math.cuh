// argus_math.cuh: one wrapper per elementwise math op of the op table (argus/ir/ops/math.py
// names them in each op's `cuda` template). fp32 in, fp32 out; 16-bit values are held in
// fp32 registers already rounded (argus::round_bf16 / round_f16), as the interpreter holds them.
#pragma once

namespace argus {

/// 2^x: ex2.approx.ftz.f32 (MUFU.EX2), at most 2 ulp from the exact value; -inf gives 0.
__device__ __forceinline__ float exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// x / y, IEEE round to nearest (div.rn.f32), as NumPy's fp32 divide.
__device__ __forceinline__ float div(float x, float y) { return __fdiv_rn(x, y); }

/// max/min of two floats (fmax.f32: a NaN operand yields the other one).
__device__ __forceinline__ float max(float x, float y) { return fmaxf(x, y); }
__device__ __forceinline__ float min(float x, float y) { return fminf(x, y); }
/// max/min of two ints.
__device__ __forceinline__ int max(int x, int y) { return x > y ? x : y; }
__device__ __forceinline__ int min(int x, int y) { return x < y ? x : y; }

/// x rounded to bf16 / fp16 (round to nearest even) and held as fp32.
__device__ __forceinline__ float round_bf16(float x) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return __uint_as_float(((unsigned)h) << 16);
}
__device__ __forceinline__ float round_f16(float x) {
  unsigned short h;
  float y;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  asm("cvt.f32.f16 %0, %1;" : "=f"(y) : "h"(h));
  return y;
}

}  // namespace argus
