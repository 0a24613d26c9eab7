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

/// max of two floats (max.f32: a NaN operand yields the other one).
__device__ __forceinline__ float max(float x, float y) { return fmaxf(x, y); }

/// min of two floats (min.f32).
__device__ __forceinline__ float min(float x, float y) { return fminf(x, y); }

/// max of two ints.
__device__ __forceinline__ int max(int x, int y) { return x > y ? x : y; }

/// min of two ints.
__device__ __forceinline__ int min(int x, int y) { return x < y ? x : y; }

/// x rounded to bf16 (round to nearest even) and held as fp32.
__device__ __forceinline__ float round_bf16(float x) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return __uint_as_float(((unsigned)h) << 16);
}

/// x rounded to fp16 (round to nearest even) and held as fp32.
__device__ __forceinline__ float round_f16(float x) {
  unsigned short h;
  float y;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  asm("cvt.f32.f16 %0, %1;" : "=f"(y) : "h"(h));
  return y;
}

}  // namespace argus

// ---- transcendental and activation wrappers (math.exp ... math.gelu_tanh of the op table) ----
// Error bounds are against the correctly rounded fp32 result of the fp32 input, measured
// exhaustively over all 2^32 inputs on an H200 (tests/codegen/math_ulp.cu); "ftz": results
// and inputs below 2^-126 are flushed to zero, as ex2/rcp/rsqrt .ftz do. PTX approximations
// are used where their error is a few ulp over the full range (ex2, rcp, rsqrt); where it is
// not (tanh.approx: 2^-11 relative; lg2.approx: absolute 2^-22 near 1, unbounded in ulp) the
// CUDA math library's function is called instead.
namespace argus {

/// 1/x: rcp.approx.ftz.f32 (MUFU.RCP), at most 1 ulp; 1/inf = 0, 1/0 = inf.
__device__ __forceinline__ float rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// e^x: 2^hi (ex2.approx) times 1 + lo ln2, where hi + lo = x log2(e) to 2^-48 (an fma
/// recovers the product's rounding error): at most 2 ulp over all x (ftz), where a bare
/// ex2(x * log2e) would be off by up to 1.2|x| more ulp (CUDA's __expf); exp(-inf) = 0.
__device__ __forceinline__ float exp(float x) {
  const float kLog2e = 1.4426950216293335f, kLog2eLo = 1.925963e-8f, kLn2 = 0.6931471824645996f;
  float hi = x * kLog2e;
  float lo = fmaf(x, kLog2eLo, fmaf(x, kLog2e, -hi));
  float e = argus::exp2(hi);
  return fabsf(hi) < 128.0f ? fmaf(e, lo * kLn2, e) : e;  // |hi| >= 128: 0 or inf (or NaN)
}

/// ln x: logf of the CUDA math library, at most 1 ulp (lg2.approx * ln2 is not ulp-bounded
/// near x = 1, where ln x -> 0); ln 0 = -inf, ln of x < 0 = NaN.
__device__ __forceinline__ float log(float x) { return ::logf(x); }

/// log2 x: log2f of the CUDA math library, at most 1 ulp (see log for why not lg2.approx).
__device__ __forceinline__ float log2(float x) { return ::log2f(x); }

/// sqrt x: sqrt.rn.f32, IEEE round to nearest (0.5 ulp, the exact answer); sqrt(-0) = -0.
__device__ __forceinline__ float sqrt(float x) {
  float y;
  asm("sqrt.rn.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// 1/sqrt x: rsqrt.approx.ftz.f32 (MUFU.RSQ), at most 2 ulp (ftz); rsqrt(0) = inf.
__device__ __forceinline__ float rsqrt(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// tanh x: tanhf of the CUDA math library, at most 2 ulp (tanh.approx.f32 is one MUFU.TANH
/// but only good to 2^-11 relative, about 2^12 ulp: enough for bf16, not for fp32).
__device__ __forceinline__ float tanh(float x) { return ::tanhf(x); }

/// erf x: erff of the CUDA math library, at most 2 ulp.
__device__ __forceinline__ float erf(float x) { return ::erff(x); }

/// |x| of a float (abs.f32, exact) and of an int.
__device__ __forceinline__ float abs(float x) { return fabsf(x); }
/// |x| of an int (INT_MIN stays INT_MIN, as in two's complement).
__device__ __forceinline__ int abs(int x) { return x < 0 ? -x : x; }

/// 1 / (1 + e^-x): argus::exp and rcp, at most 3 ulp (ftz); 0 at -inf, 1 at +inf.
__device__ __forceinline__ float sigmoid(float x) { return argus::rcp(1.0f + argus::exp(-x)); }

/// x * sigmoid(x) (SiLU): at most 4 ulp (ftz); NaN at -inf (-inf * 0), as the op table's
/// x / (1 + e^-x).
__device__ __forceinline__ float silu(float x) { return x * argus::rcp(1.0f + argus::exp(-x)); }

/// GELU x/2 (1 + erf(x / sqrt 2)) as x/2 erfc(-x / sqrt 2) (erfcf of the CUDA math library):
/// no cancellation for negative x, where 1 + erf(..) would lose every digit; at most 4 ulp for
/// x >= -4, the error growing as x^2 ulp below (the rounding of x / sqrt 2, amplified by erfc).
__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * ::erfcf(x * -0.7071067690849304f);
}

/// GELU, tanh form: x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as the
/// same x / (1 + e^-2u) (no cancellation for negative x): at most 4 ulp for x >= -4, the error
/// growing as |x|^3 ulp below (the rounding of u, amplified by e^2u).
__device__ __forceinline__ float gelu_tanh(float x) {
  const float kK = 1.5957691669464111f, kKc = 0.07135481387376785f;  // 2 sqrt(2/pi), * 0.044715
  return x * argus::rcp(1.0f + argus::exp(-x * fmaf(kKc, x * x, kK)));
}

}  // namespace argus
