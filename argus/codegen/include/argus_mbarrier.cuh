// argus_mbarrier.cuh: mbarrier wrappers (PTX ISA "Parallel synchronization: mbarrier").
// Every wrapper takes the barrier's 32-bit shared address (argus::shared_address). The only
// loop in Argus's device headers is mbarrier_wait_parity's spin on try_wait.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// Initialise the 8-byte barrier at `bar` to expect `arrivals` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(u32 bar, u32 arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}

/// Arrive once on a barrier of this CTA (release semantics, CTA scope).
__device__ __forceinline__ void mbarrier_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/// Arrive once and raise the phase's expected transaction count by `bytes` (TMA producers).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

/// Raise the current phase's expected transaction count by `bytes` without arriving.
__device__ __forceinline__ void mbarrier_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

/// Arrive on the barrier at the same offset in CTA `cta_rank` of this cluster (mapa + arrive).
/// Release at CTA scope, as for a local arrive: what the arrive publishes is that this CTA's
/// reads of a stage are done (wgmma_wait returned), and the peer answers with a TMA write,
/// not with reads of this CTA's stores. A .release.cluster arrive costs a MEMBAR.ALL.GPU
/// per call (seen in the SASS; it halved the cluster GEMM's speed on the H200).
__device__ __forceinline__ void mbarrier_arrive_remote(u32 bar, u32 cta_rank) {
  asm volatile(
      "{\n\t.reg .b32 remote;\n\t"
      "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
      "mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];\n\t}" ::"r"(bar),
      "r"(cta_rank)
      : "memory");
}

/// One non-blocking test of phase `parity` (0 or 1): true once that phase has completed.
__device__ __forceinline__ bool mbarrier_try_wait_parity(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

/// Block until phase `parity` of `bar` completes. With ARGUS_MBARRIER_WAIT_LIMIT defined (debug
/// builds) the spin is bounded: past that many tries it prints `name`, the barrier and the
/// phase, and traps, so a deadlock becomes an error instead of a hang. (The printf is a call,
/// so ptxas serializes wgmma in such builds, C7510: fine for debugging, never for timing.)
__device__ __forceinline__ void mbarrier_wait_parity(u32 bar, u32 parity, const char* name = "") {
#ifdef ARGUS_MBARRIER_WAIT_LIMIT
  unsigned long long tries = 0;
  while (!mbarrier_try_wait_parity(bar, parity)) {
    if (++tries > (unsigned long long)(ARGUS_MBARRIER_WAIT_LIMIT)) {
      printf("argus: mbarrier wait timed out: barrier '%s' (smem 0x%x) parity %u, block (%d,%d,%d) thread %d\n",
             name, bar, parity, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
      __trap();
    }
  }
#else
  (void)name;
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
#endif
}

}  // namespace argus
