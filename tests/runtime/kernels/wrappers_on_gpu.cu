// Small kernels that check what some wrappers do, on a GPU (tests/runtime/test_wrappers_on_gpu.py).
#include "argus_fence.cuh"
#include "argus_ldmatrix.cuh"
#include "argus_mbarrier.cuh"

using namespace argus;

// One warp: load four 8x8 b16 matrices (a 32x8 block, row r at in + 8r) with ldmatrix, and store
// them back with stmatrix; `mode` 0: plain both ways, 1: .trans both ways, 2: plain load, .trans store.
extern "C" __global__ void ldst_matrix(const unsigned short* in, unsigned short* out, int mode) {
  __shared__ alignas(16) unsigned short src[32 * 8];
  __shared__ alignas(16) unsigned short dst[32 * 8];
  for (int i = threadIdx.x; i < 32 * 8; i += 32) src[i] = in[i];
  __syncwarp();
  const u32 lane = threadIdx.x;
  u32 r[4];
  if (mode == 1) ldmatrix<4, true>(r, shared_address(&src[lane * 8]));
  else ldmatrix<4, false>(r, shared_address(&src[lane * 8]));
  if (mode == 0) stmatrix<4, false>(shared_address(&dst[lane * 8]), r);
  else stmatrix<4, true>(shared_address(&dst[lane * 8]), r);
  __syncwarp();
  for (int i = threadIdx.x; i < 32 * 8; i += 32) out[i] = dst[i];
}

// Per warp, how many lanes elect_one_sync picked.
extern "C" __global__ void elect_count(int* counts) {
  if (elect_one_sync()) atomicAdd(&counts[threadIdx.x / 32], 1);
}

// Two phases of one barrier expecting every thread: each thread records whether phase 0 was seen
// complete only after all arrived, then phase 1 likewise; the second arrival is after a named barrier.
extern "C" __global__ void mbarrier_phases(int* arrived_before, int* flags) {
  __shared__ alignas(8) unsigned long long bar;
  __shared__ int count;
  const u32 b = shared_address(&bar);
  if (threadIdx.x == 0) {
    count = 0;
    mbarrier_init(b, blockDim.x);
    fence_mbarrier_init();
  }
  __syncthreads();
  for (u32 phase = 0; phase < 2; ++phase) {
    atomicAdd(&count, 1);
    mbarrier_arrive(b);
    mbarrier_wait_parity(b, phase, "phase");
    arrived_before[phase * blockDim.x + threadIdx.x] = atomicAdd(&count, 0);
    flags[phase * blockDim.x + threadIdx.x] = mbarrier_try_wait_parity(b, phase) ? 1 : 0;
    named_barrier_sync<1, 256>();
  }
}
