// argus_fence.cuh: fences, named barriers, cluster barriers and elect.sync.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// Order this thread's ordinary shared-memory writes before later async-proxy reads (TMA, wgmma).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// Make mbarrier initialisations visible to the async proxy and to the other CTAs of the cluster.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Wait at named barrier `Id` until `Count` threads (a multiple of 32) have arrived or synced.
template <int Id, int Count>
__device__ __forceinline__ void named_barrier_sync() {
  static_assert(Id >= 0 && Id < 16, "named barrier id must be in [0, 16)");
  static_assert(Count > 0 && Count <= 1024 && Count % 32 == 0,
                "named barrier thread count must be a positive multiple of 32, at most 1024");
  asm volatile("bar.sync %0, %1;" ::"n"(Id), "n"(Count) : "memory");
}

/// Arrive at named barrier `Id` (expecting `Count` threads in all) without waiting.
template <int Id, int Count>
__device__ __forceinline__ void named_barrier_arrive() {
  static_assert(Id >= 0 && Id < 16, "named barrier id must be in [0, 16)");
  static_assert(Count > 0 && Count <= 1024 && Count % 32 == 0,
                "named barrier thread count must be a positive multiple of 32, at most 1024");
  asm volatile("bar.arrive %0, %1;" ::"n"(Id), "n"(Count) : "memory");
}

/// Arrive at the cluster barrier (release), all threads of the warp together.
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

/// Wait at the cluster barrier (acquire) for every thread of every CTA in the cluster.
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/// This CTA's rank within its cluster (%cluster_ctarank), for multicast masks and remote arrives.
__device__ __forceinline__ u32 cluster_cta_rank() {
  u32 rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

/// This CTA's cluster as a linear index over the grid of clusters, x fastest (%clusterid,
/// %nclusterid): the walker of a persistent schedule shared by a cluster's CTAs.
__device__ __forceinline__ u32 cluster_linear_id() {
  u32 x, y, z, nx, ny;
  asm volatile("mov.u32 %0, %%clusterid.x;\n\tmov.u32 %1, %%clusterid.y;\n\t"
               "mov.u32 %2, %%clusterid.z;\n\tmov.u32 %3, %%nclusterid.x;\n\t"
               "mov.u32 %4, %%nclusterid.y;"
               : "=r"(x), "=r"(y), "=r"(z), "=r"(nx), "=r"(ny));
  return x + nx * (y + ny * z);
}

/// The number of clusters in the grid (%nclusterid.x * .y * .z).
__device__ __forceinline__ u32 cluster_count() {
  u32 nx, ny, nz;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n\tmov.u32 %1, %%nclusterid.y;\n\t"
               "mov.u32 %2, %%nclusterid.z;" : "=r"(nx), "=r"(ny), "=r"(nz));
  return nx * ny * nz;
}

/// True in exactly one active lane of the warp (elect.sync over all 32 lanes).
__device__ __forceinline__ bool elect_one_sync() {
  u32 elected;
  asm volatile(
      "{\n\t.reg .pred p;\n\t.reg .b32 lane;\n\t"
      "elect.sync lane|p, 0xffffffff;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(elected));
  return elected != 0;
}

}  // namespace argus
