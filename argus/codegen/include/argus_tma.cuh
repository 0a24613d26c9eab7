// argus_tma.cuh: the bulk tensor copy engine (cp.async.bulk.tensor, TMA). The tensor map (a
// CUtensorMap, 64-byte aligned, usually a __grid_constant__ kernel parameter) is passed by its
// generic address; coordinates are element indices, innermost first, one per tensor-map rank.
#pragma once
#include "argus_address.cuh"

namespace argus {

#define ARGUS_CHECK_TMA_RANK(Rank) static_assert((Rank) >= 1 && (Rank) <= 5, "TMA rank must be 1 to 5")


/// Load the box at `c` of `map` into shared memory at `dst`; completes `bytes` on mbarrier `bar`.
template <int Rank>
__device__ __forceinline__ void tma_load(u32 dst, const void* map, u32 bar, const int (&c)[Rank]) {
  ARGUS_CHECK_TMA_RANK(Rank);
#define ARGUS_TMA_LOAD(N, COORDS, ...)                                                             \
  asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.mbarrier::complete_tx::bytes" \
               " [%0], [%1, " COORDS "], [%2];" ::"r"(dst), "l"(map), "r"(bar), __VA_ARGS__      \
               : "memory")
  if constexpr (Rank == 1) ARGUS_TMA_LOAD(1, "{%3}", "r"(c[0]));
  else if constexpr (Rank == 2) ARGUS_TMA_LOAD(2, "{%3, %4}", "r"(c[0]), "r"(c[1]));
  else if constexpr (Rank == 3) ARGUS_TMA_LOAD(3, "{%3, %4, %5}", "r"(c[0]), "r"(c[1]), "r"(c[2]));
  else if constexpr (Rank == 4)
    ARGUS_TMA_LOAD(4, "{%3, %4, %5, %6}", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  else
    ARGUS_TMA_LOAD(5, "{%3, %4, %5, %6, %7}", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]));
#undef ARGUS_TMA_LOAD
}

/// As tma_load, but the box lands at the same offset in every CTA of the cluster named in
/// `cta_mask`, and completes on the barrier at `bar`'s offset in each of them.
template <int Rank>
__device__ __forceinline__ void tma_load_multicast(u32 dst, const void* map, u32 bar, u16 cta_mask,
                                                   const int (&c)[Rank]) {
  ARGUS_CHECK_TMA_RANK(Rank);
#define ARGUS_TMA_LOAD_MC(N, COORDS, ...)                                                          \
  asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.mbarrier::complete_tx::bytes" \
               ".multicast::cluster [%0], [%1, " COORDS "], [%2], %3;" ::"r"(dst), "l"(map),      \
               "r"(bar), "h"(cta_mask), __VA_ARGS__ : "memory")
  if constexpr (Rank == 1) ARGUS_TMA_LOAD_MC(1, "{%4}", "r"(c[0]));
  else if constexpr (Rank == 2) ARGUS_TMA_LOAD_MC(2, "{%4, %5}", "r"(c[0]), "r"(c[1]));
  else if constexpr (Rank == 3) ARGUS_TMA_LOAD_MC(3, "{%4, %5, %6}", "r"(c[0]), "r"(c[1]), "r"(c[2]));
  else if constexpr (Rank == 4)
    ARGUS_TMA_LOAD_MC(4, "{%4, %5, %6, %7}", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  else
    ARGUS_TMA_LOAD_MC(5, "{%4, %5, %6, %7, %8}", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]));
#undef ARGUS_TMA_LOAD_MC
}

/// Store the shared-memory box at `src` to `map` at `c`; tracked by the bulk async-group.
template <int Rank>
__device__ __forceinline__ void tma_store(const void* map, u32 src, const int (&c)[Rank]) {
  ARGUS_CHECK_TMA_RANK(Rank);
#define ARGUS_TMA_STORE(N, COORDS, ...)                                                   \
  asm volatile("cp.async.bulk.tensor." #N "d.global.shared::cta.bulk_group"              \
               " [%0, " COORDS "], [%1];" ::"l"(map), "r"(src), __VA_ARGS__ : "memory")
  if constexpr (Rank == 1) ARGUS_TMA_STORE(1, "{%2}", "r"(c[0]));
  else if constexpr (Rank == 2) ARGUS_TMA_STORE(2, "{%2, %3}", "r"(c[0]), "r"(c[1]));
  else if constexpr (Rank == 3) ARGUS_TMA_STORE(3, "{%2, %3, %4}", "r"(c[0]), "r"(c[1]), "r"(c[2]));
  else if constexpr (Rank == 4)
    ARGUS_TMA_STORE(4, "{%2, %3, %4, %5}", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  else
    ARGUS_TMA_STORE(5, "{%2, %3, %4, %5, %6}", "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]));
#undef ARGUS_TMA_STORE
}

/// Close the bulk async-group of this thread's TMA stores issued so far.
__device__ __forceinline__ void tma_store_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// Wait until at most `Pending` bulk async-groups still read their shared-memory source.
template <int Pending>
__device__ __forceinline__ void tma_store_wait_read() {
  static_assert(Pending >= 0 && Pending <= 7, "pending bulk groups must be in [0, 7]");
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}

/// Wait until at most `Pending` bulk async-groups are incomplete (writes visible).
template <int Pending>
__device__ __forceinline__ void tma_store_wait() {
  static_assert(Pending >= 0 && Pending <= 7, "pending bulk groups must be in [0, 7]");
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(Pending) : "memory");
}

/// Prefetch the tensor map at generic address `map` into the descriptor cache.
__device__ __forceinline__ void tma_prefetch_descriptor(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

#undef ARGUS_CHECK_TMA_RANK

}  // namespace argus
