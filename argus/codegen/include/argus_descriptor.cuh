// argus_descriptor.cuh: the wgmma shared-memory matrix descriptor. The constant fields (LBO, SBO,
// swizzle mode, base offset) are computed by the compiler from the operand layout
// (argus.layout.hopper.descriptor); only the start address is known at run time.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// `fields` with the 14-bit start-address field (bits 0-13, address >> 4) set to `smem_addr`.
__device__ __forceinline__ u64 smem_descriptor(u32 smem_addr, u64 fields) {
  return fields | (u64)((smem_addr & 0x3FFFF) >> 4);
}

/// A tensor map (CUtensorMap) as an opaque, 64-byte aligned kernel parameter.
struct alignas(64) TensorMap {
  u64 words[16];
};

}  // namespace argus
