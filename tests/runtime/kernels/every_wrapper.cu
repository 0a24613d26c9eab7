// Calls every wrapper of argus/codegen/include once, so that each header compiles for sm_90a and
// each intended instruction shows up in the SASS. Not meant to run: the values are nonsense.
#include "argus_address.cuh"
#include "argus_convert.cuh"
#include "argus_cp_async.cuh"
#include "argus_descriptor.cuh"
#include "argus_exchange.cuh"
#include "argus_fence.cuh"
#include "argus_grid_dependency.cuh"
#include "argus_ldmatrix.cuh"
#include "argus_math.cuh"
#include "argus_mbarrier.cuh"
#include "argus_reduce.cuh"
#include "argus_regs.cuh"
#include "argus_tma.cuh"
#include "argus_vector.cuh"
#include "argus_wgmma.cuh"

using namespace argus;

struct alignas(64) TensorMapBytes { unsigned char bytes[128]; };

extern "C" __global__ void __launch_bounds__(384, 1)
every_wrapper(const __grid_constant__ TensorMapBytes map, float* out, int flag) {
  __shared__ alignas(1024) unsigned char tile[64 * 64 * 2 * 2];
  __shared__ alignas(8) unsigned long long bars[2];
  const u32 tile_addr = shared_address(tile);
  const u32 bar = shared_address(&bars[0]);
  const int warpgroup = threadIdx.x / 128;
  grid_dependency_wait();
  launch_dependents();

  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    mbarrier_init(bar + 8, 128);
    fence_mbarrier_init();
  }
  __syncthreads();
  cluster_arrive();
  cluster_wait();

  if (warpgroup == 0) {
    setmaxnreg_dec<40>();
    // argus_cp_async.cuh: LDGSTS of 16 bytes at a swizzled address, its noinc arrival
    cp_async_16(swizzle_address<3>(tile_addr + 16 * threadIdx.x), out + 4 * threadIdx.x, flag ? 16u : 0u);
    cp_async_arrive_noinc(bar + 8);
    if (elect_one_sync()) {
      tma_prefetch_descriptor(&map);
      mbarrier_arrive_expect_tx(bar, 8192);
      mbarrier_expect_tx(bar, 0);
      const int c1[1] = {flag};
      const int c2[2] = {flag, 1};
      const int c3[3] = {flag, 1, 2};
      const int c4[4] = {flag, 1, 2, 3};
      const int c5[5] = {flag, 1, 2, 3, 4};
      tma_load<1>(tile_addr, &map, bar, c1);
      tma_load<2>(tile_addr, &map, bar, c2);
      tma_load<3>(tile_addr, &map, bar, c3);
      tma_load<4>(tile_addr, &map, bar, c4);
      tma_load<5>(tile_addr, &map, bar, c5);
      tma_load_multicast<1>(tile_addr, &map, bar, 0x3, c1);
      tma_load_multicast<2>(tile_addr, &map, bar, 0x3, c2);
      tma_load_multicast<3>(tile_addr, &map, bar, 0x3, c3);
      tma_load_multicast<4>(tile_addr, &map, bar, 0x3, c4);
      tma_load_multicast<5>(tile_addr, &map, bar, 0x3, c5);
      mbarrier_wait_parity(bar + 8, 0, "consumed");
      tma_store<1>(&map, tile_addr, c1);
      tma_store<2>(&map, tile_addr, c2);
      tma_store<3>(&map, tile_addr, c3);
      tma_store<4>(&map, tile_addr, c4);
      tma_store<5>(&map, tile_addr, c5);
      tma_store_commit_group();
      tma_store_wait_read<1>();
      tma_store_wait<0>();
    }
  } else {
    setmaxnreg_inc<232>();
    mbarrier_wait_parity(bar, 0, "loaded");
    const bool ready = mbarrier_try_wait_parity(bar, 1);
    const u64 desc = 0x4000004000010000ull + (u64)flag;
    float acc64[32];
    float acc256[128];
#pragma unroll
    for (int i = 0; i < 32; ++i) acc64[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; ++i) acc256[i] = 0.0f;
    // Each load gets its own destination so none is dead (the compiler drops unused ldmatrix).
    u32 frag[4], frag_t[4], two[2], two_t[2], one[1], one_t[1];
    const u32 row = tile_addr + (threadIdx.x % 32) * 16;
    ldmatrix<4, false>(frag, row);
    ldmatrix<4, true>(frag_t, row);
    ldmatrix<2, false>(two, row);
    ldmatrix<2, true>(two_t, row);
    ldmatrix<1, false>(one, row);
    ldmatrix<1, true>(one_t, row);
#pragma unroll
    for (int i = 0; i < 4; ++i) frag[i] ^= frag_t[i];
    two[0] ^= two_t[0] ^ one_t[0];
    two[1] ^= two_t[1];
    wgmma_fence_accumulators<64>(acc64);
    wgmma_fence_accumulators<256>(acc256);
    wgmma_fence();
    wgmma_ss<64, WgmmaInput::bf16>(acc64, desc, desc, ready);
    wgmma_ss<64, WgmmaInput::f16, 1, 1>(acc64, desc, desc, true);
    wgmma_ss<256, WgmmaInput::bf16, 0, 1>(acc256, desc, desc, true);
    wgmma_rs<64, WgmmaInput::bf16>(acc64, frag, desc, true);
    wgmma_rs<256, WgmmaInput::f16, 1>(acc256, frag, desc, true);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_accumulators<64>(acc64);
    wgmma_fence_accumulators<256>(acc256);
    stmatrix<4, false>(row, frag);
    stmatrix<4, true>(row, frag);
    stmatrix<2, false>(row, two);
    stmatrix<2, true>(row, two);
    stmatrix<1, false>(row, one);
    stmatrix<1, true>(row, one);
    fence_proxy_async_shared();
    named_barrier_arrive<1, 256>();
    named_barrier_sync<2, 256>();
    mbarrier_arrive(bar + 8);
    mbarrier_arrive_remote(bar + 8, cluster_cta_rank() ^ 1);
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 32; ++i) sum += acc64[i];
#pragma unroll
    for (int i = 0; i < 128; ++i) sum += acc256[i];
    const u32 packed = pack_bf16x2(sum, acc64[1]) ^ pack_f16x2(acc64[2], sum);
    const u32 single = (u32)to_bf16(acc64[3]) | ((u32)to_f16(sum) << 16);
    const u64 made = smem_descriptor(tile_addr, 0x4000004000010000ull);
    st_shared_u32(tile_addr + 4 * threadIdx.x, packed);
    red_add_f32x2(out + 2 * (threadIdx.x / 2), sum, acc64[5]);
    red_add_f32(out + threadIdx.x, acc64[6]);
    // argus_math.cuh and argus_exchange.cuh: MUFU.EX2, SHFL.BFLY, STS/LDS, BAR.SYNC with a count
    float m = argus::exp2(sum) + (float)(argus::floordiv((int)sum, -3) + argus::mod((int)sum, 7)) + argus::div(acc64[7], sum) + argus::max(acc64[8], sum);
    m = argus::min(m, argus::round_bf16(m) + argus::round_f16(acc64[9]));
    m += (float)(argus::max((int)m, 3) + argus::min((int)sum, 5));
    m += argus::shfl_xor(m, 1) + from_bf16((u16)packed) + from_f16((u16)single);
    st_shared_f32(tile_addr + 4 * threadIdx.x, m);
    warpgroup_sync(12 + (int)threadIdx.x / 128);
    m += ld_shared_f32(tile_addr + 4 * (threadIdx.x ^ 1));
    // argus_vector.cuh: LDG/STG .128 of 8 bf16 and of 2 x 4 fp32, .64 of 4 bf16
    const u16* halves = reinterpret_cast<const u16*>(out) + 8 * threadIdx.x;
    if (vector_aligned<8>(halves) && vector_aligned<8>(out)) {
      Vec<8, u16> bits = load_vec<8>(halves);
      Vec<8, float> eight = load_vec<8>(out + 8 * threadIdx.x);
      m += eight.e[3] + from_bf16(bits.e[5]);     // constant indices: no local memory
      bits.e[2] = to_bf16(m);
      store_vec<8>(reinterpret_cast<u16*>(out) + 4096 + 8 * threadIdx.x, bits);
      const Vec<4, u16> four = {{bits.e[1], bits.e[3], bits.e[5], bits.e[7]}};
      store_vec<4>(reinterpret_cast<u16*>(out) + 8192 + 4 * threadIdx.x, four);
      eight.e[6] = m;
      store_vec<8>(out + 8192 + 8 * threadIdx.x, eight);
    }
    out[threadIdx.x] = sum + m + (float)(packed ^ single) + (float)(made >> 62);
  }
}
