// Hopper layout probe: a test oracle, not a library kernel.
//
// Runs each layout-bearing instruction once on inputs that encode their own
// index, and writes the raw registers / shared-memory images as JSON. The
// decoding into (thread, register) -> (row, col) tables lives in
// probe_to_json.py, which rejects any poisoned or ambiguous value.
//
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 \
//          -o .probe/hopper_probe tests/hardware/hopper_probe.cu
// Run:   .probe/hopper_probe raw.json
// The tensor-map encoder is taken from the driver through
// cudaGetDriverEntryPointByVersion, so no -lcuda (or its stub) is needed.

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "wgmma_asm.cuh"

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,         \
                   cudaGetErrorString(err_));                                    \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

#define CHECK_LAUNCH()                  \
  do {                                  \
    CHECK(cudaGetLastError());          \
    CHECK(cudaDeviceSynchronize());     \
  } while (0)

// Poisons: outputs start with these, so anything left unwritten is visible.
constexpr float kGlobalPoison = -1.0f;    // f32 output buffers before the kernel
constexpr float kRegisterPoison = -2.0f;  // accumulator registers before wgmma
constexpr uint32_t kWordPoison = 0xFFFFFFFFu;

// ---------------------------------------------------------------- helpers

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// bf16 bits of a float that bf16 holds exactly (small integers here).
__device__ __forceinline__ uint16_t bf16_bits(float x) {
  return static_cast<uint16_t>(__float_as_uint(x) >> 16);
}

// e4m3 bits of an integer 1..15 (exact in e4m3: 3 mantissa bits, bias 7).
__device__ __forceinline__ uint8_t e4m3_bits(int x) {
  int e = 31 - __clz(x);                  // floor(log2 x)
  int mant = ((x << 3) >> e) & 7;         // the 3 bits below the leading one
  return static_cast<uint8_t>(((e + 7) << 3) | mant);
}

// Offset, in 16-byte rows, of row r of the canonical no-swizzle K-major
// ("interleaved") layout: 8-row x 16-byte core matrices stored whole (128 B),
// the core matrices of one 8-row group adjacent along K, groups one after another.
// So LBO (next core matrix along K) = 128 B, SBO (next 8-row group) = kgroups*128 B.
__device__ __forceinline__ int interleaved_byte(int row, int kbyte, int kgroups) {
  return ((row / 8) * kgroups + kbyte / 16) * 128 + (row % 8) * 16 + kbyte % 16;
}

__device__ __forceinline__ uint64_t smem_descriptor(const void* base, uint32_t lbo_bytes,
                                                    uint32_t sbo_bytes) {
  uint64_t d = (smem_addr(base) & 0x3FFFF) >> 4;          // bits 0-13
  d |= static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16;  // bits 16-29
  d |= static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32;  // bits 32-45
  return d;                                               // base offset 0, no swizzle
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit_and_wait() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---------------------------------------------------------------- 1. wgmma SS accumulator

// A[m,0]=1, A[m,1]=m, B[0,n]=n, B[1,n]=256, rest 0  =>  D[m,n] = n + 256 m.
template <int N>
__global__ void __launch_bounds__(128) wgmma_ss_kernel(float* out) {
  __shared__ __align__(128) uint8_t a_s[64 * 16 * 2];
  __shared__ __align__(128) uint8_t b_s[256 * 16 * 2];
  const int t = threadIdx.x;
  for (int i = t; i < 64 * 16; i += 128) {
    int m = i / 16, k = i % 16;
    float v = k == 0 ? 1.0f : (k == 1 ? static_cast<float>(m) : 0.0f);
    *reinterpret_cast<uint16_t*>(a_s + interleaved_byte(m, 2 * k, 2)) = bf16_bits(v);
  }
  for (int i = t; i < N * 16; i += 128) {
    int n = i / 16, k = i % 16;
    float v = k == 0 ? static_cast<float>(n) : (k == 1 ? 256.0f : 0.0f);
    *reinterpret_cast<uint16_t*>(b_s + interleaved_byte(n, 2 * k, 2)) = bf16_bits(v);
  }
  fence_async_shared();
  __syncthreads();
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = kRegisterPoison;
  uint64_t da = smem_descriptor(a_s, 128, 256);
  uint64_t db = smem_descriptor(b_s, 128, 256);
  wgmma_fence();
  wgmma_ss_bf16<N>(d, da, db);
  wgmma_commit_and_wait();
#pragma unroll
  for (int i = 0; i < N / 2; ++i) out[t * (N / 2) + i] = d[i];
}

// ---------------------------------------------------------------- 2. wgmma RS (A in registers)

// B = identity (N=16, K=16) so D = A. Run `field` 0 fills element v of thread t
// with t+1, run 1 with v+1 (both exact in bf16).
__global__ void __launch_bounds__(128) wgmma_rs_bf16_kernel(float* out, int field) {
  __shared__ __align__(128) uint8_t b_s[16 * 16 * 2];
  const int t = threadIdx.x;
  for (int i = t; i < 16 * 16; i += 128) {
    int n = i / 16, k = i % 16;
    *reinterpret_cast<uint16_t*>(b_s + interleaved_byte(n, 2 * k, 2)) =
        bf16_bits(n == k ? 1.0f : 0.0f);
  }
  fence_async_shared();
  __syncthreads();
  uint32_t a[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    uint32_t lo = bf16_bits(static_cast<float>(field == 0 ? t + 1 : 2 * r + 1));
    uint32_t hi = bf16_bits(static_cast<float>(field == 0 ? t + 1 : 2 * r + 2));
    a[r] = lo | (hi << 16);
  }
  float d[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) d[i] = kRegisterPoison;
  wgmma_fence();
  wgmma_rs_bf16_n16(d, a, smem_descriptor(b_s, 128, 256));
  wgmma_commit_and_wait();
#pragma unroll
  for (int i = 0; i < 8; ++i) out[t * 8 + i] = d[i];
}

// B = identity (N=32, K=32, e4m3) so D = A. code = 16 t + v (11 bits); run `digit`
// puts 1 + ((code >> 3*digit) & 7) in element v: 1..8, exact in e4m3.
__global__ void __launch_bounds__(128) wgmma_rs_e4m3_kernel(float* out, int digit) {
  __shared__ __align__(128) uint8_t b_s[32 * 32];
  const int t = threadIdx.x;
  for (int i = t; i < 32 * 32; i += 128) {
    int n = i / 32, k = i % 32;
    b_s[interleaved_byte(n, k, 2)] = n == k ? e4m3_bits(1) : 0;
  }
  fence_async_shared();
  __syncthreads();
  uint32_t a[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      int code = 16 * t + 4 * r + b;
      word |= static_cast<uint32_t>(e4m3_bits(1 + ((code >> (3 * digit)) & 7))) << (8 * b);
    }
    a[r] = word;
  }
  float d[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) d[i] = kRegisterPoison;
  wgmma_fence();
  wgmma_rs_e4m3_n32(d, a, smem_descriptor(b_s, 128, 256));
  wgmma_commit_and_wait();
#pragma unroll
  for (int i = 0; i < 16; ++i) out[t * 16 + i] = d[i];
}

// ---------------------------------------------------------------- 3. ldmatrix / stmatrix

template <int NUM, bool TRANS>
__device__ __forceinline__ void ldmatrix(uint32_t (&r)[4], uint32_t addr);
template <int NUM, bool TRANS>
__device__ __forceinline__ void stmatrix(const uint32_t (&r)[4], uint32_t addr);

#define PROBE_LDSM(NUM, TRANS, SUFFIX, OUTS, ...)                                        \
  template <>                                                                            \
  __device__ __forceinline__ void ldmatrix<NUM, TRANS>(uint32_t(&r)[4], uint32_t addr) { \
    asm volatile("ldmatrix.sync.aligned.m8n8" SUFFIX ".shared.b16 " OUTS ", [%" #NUM "];\n" \
                 : __VA_ARGS__                                                           \
                 : "r"(addr));                                                           \
  }
PROBE_LDSM(1, false, ".x1", "{%0}", "=r"(r[0]))
PROBE_LDSM(2, false, ".x2", "{%0, %1}", "=r"(r[0]), "=r"(r[1]))
PROBE_LDSM(4, false, ".x4", "{%0, %1, %2, %3}", "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]))
PROBE_LDSM(1, true, ".x1.trans", "{%0}", "=r"(r[0]))
PROBE_LDSM(2, true, ".x2.trans", "{%0, %1}", "=r"(r[0]), "=r"(r[1]))
PROBE_LDSM(4, true, ".x4.trans", "{%0, %1, %2, %3}", "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]))
#undef PROBE_LDSM

#define PROBE_STSM(NUM, TRANS, SUFFIX, INS, ...)                                          \
  template <>                                                                             \
  __device__ __forceinline__ void stmatrix<NUM, TRANS>(const uint32_t(&r)[4], uint32_t addr) { \
    asm volatile("stmatrix.sync.aligned.m8n8" SUFFIX ".shared.b16 [%0], " INS ";\n"      \
                 :                                                                        \
                 : "r"(addr), __VA_ARGS__                                                 \
                 : "memory");                                                             \
  }
PROBE_STSM(1, false, ".x1", "{%1}", "r"(r[0]))
PROBE_STSM(2, false, ".x2", "{%1, %2}", "r"(r[0]), "r"(r[1]))
PROBE_STSM(4, false, ".x4", "{%1, %2, %3, %4}", "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]))
PROBE_STSM(1, true, ".x1.trans", "{%1}", "r"(r[0]))
PROBE_STSM(2, true, ".x2.trans", "{%1, %2}", "r"(r[0]), "r"(r[1]))
PROBE_STSM(4, true, ".x4.trans", "{%1, %2, %3, %4}", "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]))
#undef PROBE_STSM

// Four 8x8 b16 matrices, matrix i row r at 16-byte row (8i + r); lane 8i+r gives
// that row's address. Element (i, r, c) holds 1 + 64 i + 8 r + c.
template <int NUM, bool TRANS>
__global__ void ldmatrix_kernel(uint32_t* out) {
  __shared__ __align__(128) uint16_t tile[4 * 8 * 8];
  const int lane = threadIdx.x;
  for (int i = lane; i < 4 * 64; i += 32) tile[i] = static_cast<uint16_t>(1 + i);
  __syncwarp();
  uint32_t r[4] = {kWordPoison, kWordPoison, kWordPoison, kWordPoison};
  ldmatrix<NUM, TRANS>(r, smem_addr(tile + lane * 8));
#pragma unroll
  for (int j = 0; j < NUM; ++j) out[lane * NUM + j] = r[j];
}

// Lane l's register j holds, low half then high half, 1 + 8 l + v with v = 2j, 2j+1.
// The shared tile starts zeroed (poison); the host reads it back whole.
template <int NUM, bool TRANS>
__global__ void stmatrix_kernel(uint16_t* out) {
  __shared__ __align__(128) uint16_t tile[4 * 8 * 8];
  const int lane = threadIdx.x;
  for (int i = lane; i < 4 * 64; i += 32) tile[i] = 0;
  __syncwarp();
  uint32_t r[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    uint32_t lo = 1 + 8 * lane + 2 * j, hi = lo + 1;
    r[j] = lo | (hi << 16);
  }
  stmatrix<NUM, TRANS>(r, smem_addr(tile + lane * 8));
  __syncwarp();
  for (int i = lane; i < 4 * 64; i += 32) out[i] = tile[i];
}

// ---------------------------------------------------------------- 4. TMA swizzle

constexpr int kTmaGlobalInner = 128, kTmaGlobalRows = 32, kTmaBoxRows = 16;
constexpr int kTmaMaxBoxBytes = 64 * 2 * kTmaBoxRows;

// Loads the box at (0, 0) into 1024-byte-aligned smem (zeroed first), waits on an
// mbarrier, and copies the smem image out; status[0] = 1 once the barrier
// completed, 0 if the bounded wait gave up (so a lost copy cannot hang the probe).
__global__ void tma_kernel(const __grid_constant__ CUtensorMap map, uint16_t* out,
                           uint32_t* status, int box_bytes) {
  __shared__ __align__(1024) uint8_t raw[kTmaMaxBoxBytes + 1024];
  __shared__ __align__(8) uint64_t bar;
  uint8_t* tile = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023);
  const int t = threadIdx.x;
  for (int i = t; i < box_bytes / 2; i += blockDim.x) reinterpret_cast<uint16_t*>(tile)[i] = 0;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  fence_async_shared();
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(&bar)),
                 "r"(box_bytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(tile)),
        "l"(reinterpret_cast<uint64_t>(&map)), "r"(0), "r"(0), "r"(smem_addr(&bar))
        : "memory");
  }
  uint32_t done = 0;
  for (int spin = 0; spin < (1 << 22) && !done; ++spin) {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(&bar)), "r"(0)
        : "memory");
  }
  if (t == 0) status[0] = done;
  __syncthreads();
  for (int i = t; i < box_bytes / 2; i += blockDim.x) out[i] = reinterpret_cast<uint16_t*>(tile)[i];
}

// ---------------------------------------------------------------- host

struct Json {
  std::string s;
  void raw(const std::string& x) { s += x; }
  void key(const char* k) { s += "\""; s += k; s += "\": "; }
  template <class T> void list(const std::vector<T>& v, int row) {
    // A list of rows of `row` values each.
    s += "[";
    for (size_t i = 0; i < v.size(); i += row) {
      if (i) s += ", ";
      s += "[";
      for (int j = 0; j < row; ++j) {
        if (j) s += ", ";
        s += num(v[i + j]);
      }
      s += "]";
    }
    s += "]";
  }
  static std::string num(float x) { char b[32]; std::snprintf(b, sizeof b, "%.9g", x); return b; }
  static std::string num(uint32_t x) { return std::to_string(x); }
  static std::string num(uint16_t x) { return std::to_string(x); }
};

template <class T> std::vector<T> run_into(size_t count, T poison, void (*launch)(T*)) {
  T* dev = nullptr;
  CHECK(cudaMalloc(&dev, count * sizeof(T)));
  std::vector<T> host(count, poison);
  CHECK(cudaMemcpy(dev, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  launch(dev);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(host.data(), dev, count * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(dev));
  return host;
}

template <int N> void probe_ss(Json& j) {
  auto v = run_into<float>(128 * (N / 2), kGlobalPoison,
                           [](float* d) { wgmma_ss_kernel<N><<<1, 128>>>(d); });
  j.raw("\"" + std::to_string(N) + "\": ");
  j.list(v, N / 2);
  if (N < 256) j.raw(", ");
  if constexpr (N < 256) probe_ss<N + 8>(j);
}

template <int NUM, bool TRANS> void probe_ldsm(Json& j, const char* name, bool last) {
  auto v = run_into<uint32_t>(32 * NUM, kWordPoison,
                              [](uint32_t* d) { ldmatrix_kernel<NUM, TRANS><<<1, 32>>>(d); });
  j.raw(std::string("\"") + name + "\": ");
  j.list(v, NUM);
  if (!last) j.raw(", ");
}

template <int NUM, bool TRANS> void probe_stsm(Json& j, const char* name, bool last) {
  auto v = run_into<uint16_t>(4 * 64, 0xFFFF,
                              [](uint16_t* d) { stmatrix_kernel<NUM, TRANS><<<1, 32>>>(d); });
  j.raw(std::string("\"") + name + "\": ");
  j.list(v, 4 * 64);
  if (!last) j.raw(", ");
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

void probe_tma(Json& j, EncodeTiled encode, const uint16_t* global, const char* name,
               CUtensorMapSwizzle swizzle, int box_inner, bool last) {
  CUtensorMap map;
  cuuint64_t dims[2] = {kTmaGlobalInner, kTmaGlobalRows};
  cuuint64_t strides[1] = {kTmaGlobalInner * 2};
  cuuint32_t box[2] = {static_cast<cuuint32_t>(box_inner), kTmaBoxRows};
  cuuint32_t elem_strides[2] = {1, 1};
  CUresult rc = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<uint16_t*>(global),
                       dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                       CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled(%s) failed: %d\n", name, static_cast<int>(rc));
    std::exit(1);
  }
  const int box_bytes = box_inner * kTmaBoxRows * 2;
  uint16_t* out = nullptr;
  uint32_t* status = nullptr;
  CHECK(cudaMalloc(&out, box_bytes));
  CHECK(cudaMalloc(&status, 4));
  CHECK(cudaMemset(out, 0xFF, box_bytes));
  CHECK(cudaMemset(status, 0, 4));
  tma_kernel<<<1, 128>>>(map, out, status, box_bytes);
  CHECK_LAUNCH();
  std::vector<uint16_t> host(box_bytes / 2);
  uint32_t done = 0;
  CHECK(cudaMemcpy(host.data(), out, box_bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&done, status, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(out));
  CHECK(cudaFree(status));
  j.raw(std::string("\"") + name + "\": {\"box\": [" + std::to_string(box_inner) + ", " +
        std::to_string(kTmaBoxRows) + "], \"barrier_completed\": " + (done ? "true" : "false") +
        ", \"smem\": ");
  j.list(host, static_cast<int>(host.size()));
  j.raw(last ? "}" : "}, ");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
    return 2;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::fprintf(stderr, "needs a Hopper GPU (sm_90); device 0 is %s, sm_%d%d\n", prop.name,
                 prop.major, prop.minor);
    return 1;
  }
  int driver = 0, runtime = 0;
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));

  Json j;
  j.raw("{\"device\": \"" + std::string(prop.name) + "\", \"cuda_driver_version\": " +
        std::to_string(driver) + ", \"cuda_runtime_version\": " + std::to_string(runtime) + ",\n");
  j.raw("\"poison\": {\"global_f32\": -1, \"register_f32\": -2, \"word\": 4294967295},\n");

  j.key("wgmma_ss_bf16");
  j.raw("{");
  probe_ss<8>(j);
  j.raw("},\n");
  std::fprintf(stderr, "probe: wgmma SS accumulators done\n");

  j.key("wgmma_rs_bf16");
  j.raw("{\"t_plus_1\": ");
  j.list(run_into<float>(128 * 8, kGlobalPoison,
                         [](float* d) { wgmma_rs_bf16_kernel<<<1, 128>>>(d, 0); }), 8);
  j.raw(", \"v_plus_1\": ");
  j.list(run_into<float>(128 * 8, kGlobalPoison,
                         [](float* d) { wgmma_rs_bf16_kernel<<<1, 128>>>(d, 1); }), 8);
  j.raw("},\n");

  j.key("wgmma_rs_e4m3");
  j.raw("[");
  j.list(run_into<float>(128 * 16, kGlobalPoison,
                         [](float* d) { wgmma_rs_e4m3_kernel<<<1, 128>>>(d, 0); }), 16);
  j.raw(", ");
  j.list(run_into<float>(128 * 16, kGlobalPoison,
                         [](float* d) { wgmma_rs_e4m3_kernel<<<1, 128>>>(d, 1); }), 16);
  j.raw(", ");
  j.list(run_into<float>(128 * 16, kGlobalPoison,
                         [](float* d) { wgmma_rs_e4m3_kernel<<<1, 128>>>(d, 2); }), 16);
  j.raw(", ");
  j.list(run_into<float>(128 * 16, kGlobalPoison,
                         [](float* d) { wgmma_rs_e4m3_kernel<<<1, 128>>>(d, 3); }), 16);
  j.raw("],\n");
  std::fprintf(stderr, "probe: wgmma RS bf16 and e4m3 done\n");

  j.key("ldmatrix");
  j.raw("{");
  probe_ldsm<1, false>(j, "x1", false);
  probe_ldsm<2, false>(j, "x2", false);
  probe_ldsm<4, false>(j, "x4", false);
  probe_ldsm<1, true>(j, "x1_trans", false);
  probe_ldsm<2, true>(j, "x2_trans", false);
  probe_ldsm<4, true>(j, "x4_trans", true);
  j.raw("},\n");

  j.key("stmatrix");
  j.raw("{");
  probe_stsm<1, false>(j, "x1", false);
  probe_stsm<2, false>(j, "x2", false);
  probe_stsm<4, false>(j, "x4", false);
  probe_stsm<1, true>(j, "x1_trans", false);
  probe_stsm<2, true>(j, "x2_trans", false);
  probe_stsm<4, true>(j, "x4_trans", true);
  j.raw("},\n");
  std::fprintf(stderr, "probe: ldmatrix and stmatrix done\n");

  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "driver has no cuTensorMapEncodeTiled\n");
    return 1;
  }
  EncodeTiled encode = reinterpret_cast<EncodeTiled>(fn);
  // Global tensor [rows=32][inner=128] u16; element (c0, c1) holds 1 + c0 + 256 c1.
  std::vector<uint16_t> g(kTmaGlobalInner * kTmaGlobalRows);
  for (int c1 = 0; c1 < kTmaGlobalRows; ++c1)
    for (int c0 = 0; c0 < kTmaGlobalInner; ++c0)
      g[c1 * kTmaGlobalInner + c0] = static_cast<uint16_t>(1 + c0 + 256 * c1);
  uint16_t* gdev = nullptr;
  CHECK(cudaMalloc(&gdev, g.size() * 2));
  CHECK(cudaMemcpy(gdev, g.data(), g.size() * 2, cudaMemcpyHostToDevice));
  j.key("tma");
  j.raw("{");
  probe_tma(j, encode, gdev, "128B", CU_TENSOR_MAP_SWIZZLE_128B, 64, false);
  probe_tma(j, encode, gdev, "64B", CU_TENSOR_MAP_SWIZZLE_64B, 32, false);
  probe_tma(j, encode, gdev, "32B", CU_TENSOR_MAP_SWIZZLE_32B, 16, false);
  probe_tma(j, encode, gdev, "none", CU_TENSOR_MAP_SWIZZLE_NONE, 64, true);
  j.raw("}}\n");
  CHECK(cudaFree(gdev));

  FILE* f = std::fopen(argv[1], "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", argv[1]);
    return 1;
  }
  std::fputs(j.s.c_str(), f);
  std::fclose(f);
  std::printf("probe: wrote %s (%zu bytes) from %s\n", argv[1], j.s.size(), prop.name);
  return 0;
}
