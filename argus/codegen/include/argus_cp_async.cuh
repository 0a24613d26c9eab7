// argus_cp_async.cuh: the per-thread asynchronous copy (cp.async, SASS LDGSTS) and its
// mbarrier arrival (PTX ISA "Data movement: cp.async", "cp.async.mbarrier.arrive").
// A cp.async writes shared memory through the generic proxy: a wgmma (async proxy) reading
// what it wrote needs a fence.proxy.async after the barrier wait.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// Copy 16 bytes from global `src` to shared `dst` (16-byte aligned both), through L2 only
/// (.cg); `src_bytes` (0 or 16) of them are read and the rest are zero-filled, so a row
/// outside the tensor lands as zeros (pass any valid `src` with 0).
__device__ __forceinline__ void cp_async_16(u32 dst, const void* src, u32 src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}

/// Arrive once on `bar` when every cp.async this thread has issued so far has landed. The
/// arrival is not pre-counted (.noinc): `bar`'s init count includes one per thread that calls it.
__device__ __forceinline__ void cp_async_arrive_noinc(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

}  // namespace argus
