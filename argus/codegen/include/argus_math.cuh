// argus_math.cuh: one wrapper per elementwise math op of the op table (argus/ir/ops/math.py
// names them in each op's `cuda` template). fp32 in, fp32 out; 16-bit values are held in
// fp32 registers already rounded (argus::round_bf16 / round_f16), as the interpreter holds them.
#pragma once

namespace argus {

/// 2^x: ex2.approx.ftz.f32 (MUFU.EX2), at most 2.06 ulp (measured over all fp32 inputs); -inf gives 0.
__device__ __forceinline__ float exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// 2^x on the FMA pipe, no MUFU (exp2(x, poly_every=n) of the DSL sends one register in n
/// here, so that a softmax bound by MUFU.EX2's 16 results a clock an SM shares the work with
/// the FP32 units): x clamped to [-127, 128] (NaN kept), j = floor(x) by one add rounding
/// down onto the integer grid of 1.5 * 2^23 + 127 (whose low bits are then j + 127),
/// f = x - j in [0, 1) exactly, 2^f by a degree-5 polynomial (minimax in relative error with
/// p(0) = 1; fitted by tests/codegen/test_math_wrappers.py's recipe), times 2^j built in the
/// exponent bits. Twelve instructions; at most 2.73 ulp (all 2^32 inputs, H100); x < -126 gives
/// 0 (as ex2.approx.ftz flushes), -inf 0, x >= 128 and inf give inf, NaN gives NaN.
__device__ __forceinline__ float exp2_poly(float x) {
  const float kGrid = 12583039.0f;  // 1.5 * 2^23 + 127
  float c;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(c) : "f"(x), "f"(-127.0f));
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(c) : "f"(c), "f"(128.0f));
  const float t = __fadd_rd(c, kGrid);
  const float f = __fsub_rn(c, __fsub_rn(t, kGrid));
  float p = fmaf(0.0018671302823349833f, f, 0.009017029777169228f);
  p = fmaf(p, f, 0.05579991266131401f);
  p = fmaf(p, f, 0.24016444385051727f);
  p = fmaf(p, f, 0.6931512951850891f);
  p = fmaf(p, f, 1.0f);
  return p * __int_as_float(__float_as_int(t) << 23);
}

/// x / y, IEEE round to nearest (div.rn.f32), as NumPy's fp32 divide.
__device__ __forceinline__ float div(float x, float y) { return __fdiv_rn(x, y); }

/// max of two floats (max.f32: a NaN operand yields the other one).
__device__ __forceinline__ float max(float x, float y) { return fmaxf(x, y); }

/// min of two floats (min.f32).
__device__ __forceinline__ float min(float x, float y) { return fminf(x, y); }

/// a // b with Python's meaning (the quotient rounded toward minus infinity), b != 0.
__device__ __forceinline__ int floordiv(int a, int b) {
  const int q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// a % b with Python's meaning (the remainder takes b's sign), b != 0.
__device__ __forceinline__ int mod(int a, int b) {
  const int r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

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
// Error bounds: the largest distance, in ulp, from the correctly rounded fp32 result of the
// fp32 input, measured over ALL 2^32 inputs on an H200 by tests/codegen/math_ulp.cu (float64
// reference; denormal inputs excluded and denormal results not counted: ".ftz" wrappers flush
// both to zero). PTX approximations are used where their error is a few ulp over the whole
// range (ex2, rcp, rsqrt); where it is not, the CUDA math library's function is called
// instead: lg2.approx is off by 1e7 ulp near x = 1 (absolute error 2^-22, the log -> 0),
// tanh.approx.f32 by 134 ulp (PTX promises 2^-11 relative).
namespace argus {

/// 1/x: rcp.approx.ftz.f32 (MUFU.RCP), at most 1 ulp; 1/inf = 0, 1/0 = inf, and a result
/// below 2^-126 (|x| > 2^126) flushes to 0.
__device__ __forceinline__ float rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// e^x: 2^hi (ex2.approx) times 1 + lo ln2, where hi + lo = x log2(e) to 2^-48 (an fma
/// recovers the product's rounding error): at most 2.54 ulp over all x, where a bare
/// ex2(x * log2e) is off by up to 64 ulp (CUDA's __expf); exp(-inf) = 0, exp(inf) = inf.
__device__ __forceinline__ float exp(float x) {
  const float kLog2e = 1.4426950216293335f, kLog2eLo = 1.925963e-8f, kLn2 = 0.6931471824645996f;
  float hi = x * kLog2e;
  float lo = fmaf(x, kLog2eLo, fmaf(x, kLog2e, -hi));
  float e = argus::exp2(hi);
  return fabsf(hi) < 128.0f ? fmaf(e, lo * kLn2, e) : e;  // |hi| >= 128: 0 or inf (or NaN)
}

/// ln x: logf of the CUDA math library (a polynomial, no MUFU), at most 0.87 ulp; ln 0 = -inf,
/// ln of x < 0 is NaN.
__device__ __forceinline__ float log(float x) { return ::logf(x); }

/// log2 x: log2f of the CUDA math library, at most 0.92 ulp (lg2.approx: see above).
__device__ __forceinline__ float log2(float x) { return ::log2f(x); }

/// sqrt x: sqrt.rn.f32, IEEE round to nearest (0.5 ulp: correctly rounded); sqrt(-0) = -0.
__device__ __forceinline__ float sqrt(float x) {
  float y;
  asm("sqrt.rn.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// 1/sqrt x: rsqrt.approx.ftz.f32 (MUFU.RSQ), at most 1.52 ulp; rsqrt(0) = inf.
__device__ __forceinline__ float rsqrt(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// tanh x: tanhf of the CUDA math library (ex2, rcp and a polynomial), at most 1.82 ulp.
__device__ __forceinline__ float tanh(float x) { return ::tanhf(x); }

/// erf x: erff of the CUDA math library, at most 1.04 ulp.
__device__ __forceinline__ float erf(float x) { return ::erff(x); }

/// |x| of a float: abs.f32, exact.
__device__ __forceinline__ float abs(float x) { return fabsf(x); }
/// |x| of an int (INT_MIN stays INT_MIN, as in two's complement).
__device__ __forceinline__ int abs(int x) { return x < 0 ? -x : x; }

/// 1 / (1 + e^-x): argus::exp and rcp, at most 3.0 ulp for x >= -1, 4.75 ulp over all x;
/// 0 at -inf, 1 at +inf.
__device__ __forceinline__ float sigmoid(float x) { return argus::rcp(1.0f + argus::exp(-x)); }

/// x * sigmoid(x) (SiLU): at most 3.46 ulp for x >= -1, 4.05 for x >= -10, 4.73 for x >= -80;
/// for x < -87.3 the reciprocal of 1 + e^-x flushes and the result (under 1e-35) is -0;
/// NaN at -inf (-inf * 0), as the op table's x / (1 + e^-x).
__device__ __forceinline__ float silu(float x) { return x * argus::rcp(1.0f + argus::exp(-x)); }

/// GELU x/2 (1 + erf(x / sqrt 2)), as x/2 erfc(-x / sqrt 2) (erfcf of the CUDA math library):
/// 1 + erf(..) would cancel for negative x (8100 ulp at x = -4). At most 5.0 ulp for x >= -1;
/// below, the rounding of x / sqrt 2 is amplified by erfc: 19.4 ulp for x >= -4, 87 for
/// x >= -10, 199 over all x (gelu(-13) is 1e-38); the absolute error is under 4e-7 everywhere.
__device__ __forceinline__ float gelu(float x) {
  return 0.5f * x * ::erfcf(x * -0.7071067690849304f);
}

/// GELU, tanh form: x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as the
/// same x / (1 + e^-2u) (no cancellation for negative x). At most 3.65 ulp for x >= -1; below,
/// the rounding of 2u is amplified by e^2u: 19.4 ulp for x >= -4, 210 for x >= -10; for
/// x < -10 (results under 1e-37) e^-2u overflows and the result is -0. The absolute error is
/// under 6e-7 everywhere.
__device__ __forceinline__ float gelu_tanh(float x) {
  const float kK = 1.5957691669464111f, kKc = 0.07135481387376785f;  // 2 sqrt(2/pi), * 0.044715
  return x * argus::rcp(1.0f + argus::exp(-x * fmaf(kKc, x * x, kK)));
}

}  // namespace argus
