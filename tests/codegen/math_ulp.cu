// The error of each argus_math.cuh wrapper, exhaustively: every one of the 2^32 fp32 inputs
// on the GPU, against a float64 reference of the same function (CUDA's double functions,
// within 2 ulp of double, far below an fp32 ulp). Prints one line per function: the largest
// error in ulp of the correctly rounded result (over inputs whose exact result is a normal
// float; denormal inputs skipped: the .ftz wrappers flush them by design) over x >= -1, -4,
// -10, -80 and all x, the input that reaches the overall one, the largest absolute error,
// and how many inputs got a wrong special value (NaN, inf).
//
//   nvcc -O3 -arch=sm_90a -I argus/codegen/include -o /tmp/math_ulp tests/codegen/math_ulp.cu
//   /tmp/math_ulp            # ~1 s per function on an H200
//
// The numbers the header's comments and docs/dsl.md ("Math functions") state were measured
// with this program; its output is kept in tests/codegen/math_ulp.expected.txt.
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <cstring>

#include "argus_math.cuh"

// the largest ulp error is kept over x >= each of these (the negative tails of the
// activations are where their results underflow or their conditioning grows)
__constant__ float kFrom[] = {-1.0f, -4.0f, -10.0f, -80.0f, -INFINITY};
constexpr int kRanges = 5;
static const char* kFromText[] = {"x>=-1", "x>=-4", "x>=-10", "x>=-80", "all x"};

struct Stats {
  unsigned long long max_ulp[kRanges];  // (float bits of the error in ulp) << 32 | input bits
  unsigned long long max_abs;           // (float bits of the absolute error) << 32 | input bits
  unsigned long long special;           // inputs with a wrong NaN / inf
};

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float lg2_approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

#define FUNCTIONS(X)                                                                     \
  X(exp2, argus::exp2(x), ::exp2(d))                                                     \
  X(exp2_poly, argus::exp2_poly(x), ::exp2(d))                                           \
  X(exp, argus::exp(x), ::exp(d))                                                        \
  X(exp_bare_ex2, argus::exp2(x * 1.4426950216293335f), ::exp(d))                        \
  X(log, argus::log(x), ::log(d))                                                        \
  X(log_lg2_approx, lg2_approx(x) * 0.6931471824645996f, ::log(d))                       \
  X(log2, argus::log2(x), ::log2(d))                                                     \
  X(log2_lg2_approx, lg2_approx(x), ::log2(d))                                           \
  X(sqrt, argus::sqrt(x), ::sqrt(d))                                                     \
  X(rsqrt, argus::rsqrt(x), 1.0 / ::sqrt(d))                                             \
  X(tanh, argus::tanh(x), ::tanh(d))                                                     \
  X(tanh_approx, tanh_approx(x), ::tanh(d))                                              \
  X(erf, argus::erf(x), ::erf(d))                                                        \
  X(sigmoid, argus::sigmoid(x), 1.0 / (1.0 + ::exp(-d)))                                 \
  X(silu, argus::silu(x), d / (1.0 + ::exp(-d)))                                         \
  X(gelu, argus::gelu(x), 0.5 * d * ::erfc(-d * 0.70710678118654752))                    \
  X(gelu_via_erf, 0.5f * x * (1.0f + argus::erf(x * 0.7071067690849304f)),               \
    0.5 * d * ::erfc(-d * 0.70710678118654752))                                          \
  X(gelu_tanh, argus::gelu_tanh(x),                                                      \
    d / (1.0 + ::exp(-1.5957691216057308 * (d + 0.044715 * d * d * d))))

enum Fn {
#define ENUM(name, dev, ref) fn_##name,
  FUNCTIONS(ENUM)
#undef ENUM
  fn_count
};
static const char* kNames[] = {
#define NAME(name, dev, ref) #name,
    FUNCTIONS(NAME)
#undef NAME
};

__device__ __forceinline__ unsigned long long pack(float err, uint32_t bits) {
  return ((unsigned long long)__float_as_uint(err) << 32) | bits;
}

__device__ __forceinline__ void evaluate(int fn, float x, float& got, double& ref) {
  double d = x;
  switch (fn) {
#define CASE(name, dev, r) \
  case fn_##name:          \
    got = (dev);           \
    ref = (r);             \
    break;
    FUNCTIONS(CASE)
#undef CASE
  }
}

__global__ void sweep(int fn, Stats* out) {
  unsigned long long best[kRanges] = {}, best_abs = 0, special = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += stride) {
    uint32_t bits = (uint32_t)i;
    float x = __uint_as_float(bits);
    if (fabsf(x) < 1.17549435e-38f && x != 0.0f) continue;  // denormal input: flushed by ftz
    float got;
    double ref;
    evaluate(fn, x, got, ref);
    if (isnan(ref) || isnan(got)) {
      special += (isnan(ref) != isnan(got));
      continue;
    }
    float rounded = (float)ref;
    if (isinf(rounded) || isinf(got)) {
      special += (got != rounded);
      continue;
    }
    double abs_err = fabs((double)got - ref);
    unsigned long long a = pack((float)abs_err, bits);
    best_abs = a > best_abs ? a : best_abs;
    if (fabs(ref) < 1.17549435e-38) continue;  // exact result is denormal: ftz may flush it
    double ulp = ldexp(1.0, ilogb(ref) - 23);
    unsigned long long e = pack((float)(abs_err / ulp), bits);
#pragma unroll
    for (int r = 0; r < kRanges; ++r)
      if (x >= kFrom[r]) best[r] = e > best[r] ? e : best[r];
  }
  for (int o = 16; o; o >>= 1) {
#pragma unroll
    for (int r = 0; r < kRanges; ++r) {
      unsigned long long v = __shfl_xor_sync(~0u, best[r], o);
      best[r] = v > best[r] ? v : best[r];
    }
    unsigned long long v = __shfl_xor_sync(~0u, best_abs, o);
    best_abs = v > best_abs ? v : best_abs;
    special += __shfl_xor_sync(~0u, special, o);
  }
  if ((threadIdx.x & 31) == 0) {
    for (int r = 0; r < kRanges; ++r) atomicMax(&out->max_ulp[r], best[r]);
    atomicMax(&out->max_abs, best_abs);
    atomicAdd(&out->special, special);
  }
}

static float err_of(unsigned long long v) {
  uint32_t b = (uint32_t)(v >> 32);
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static float arg_of(unsigned long long v) {
  uint32_t b = (uint32_t)v;
  float f;
  memcpy(&f, &b, 4);
  return f;
}

int main() {
  Stats* d;
  cudaMalloc(&d, sizeof(Stats));
  printf("%-16s", "function (ulp)");
  for (int r = 0; r < kRanges; ++r) printf(" %10s", kFromText[r]);
  printf(" %14s %10s %14s %8s\n", "worst at x", "max abs", "at x", "special");
  for (int fn = 0; fn < fn_count; ++fn) {
    cudaMemset(d, 0, sizeof(Stats));
    sweep<<<132 * 16, 256>>>(fn, d);
    Stats s;
    cudaMemcpy(&s, d, sizeof(Stats), cudaMemcpyDeviceToHost);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
      printf("%s: %s\n", kNames[fn], cudaGetErrorString(err));
      return 1;
    }
    printf("%-16s", kNames[fn]);
    for (int r = 0; r < kRanges; ++r) printf(" %10.3f", err_of(s.max_ulp[r]));
    printf(" %14.7g %10.3g %14.7g %8llu\n", arg_of(s.max_ulp[kRanges - 1]), err_of(s.max_abs),
           arg_of(s.max_abs), s.special);
    fflush(stdout);
  }
  return 0;
}
