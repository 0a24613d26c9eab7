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

/// The descriptor of smem_addr + offset (offset a multiple of 16): smem_addr's descriptor
/// plus offset >> 4 in the start-address field. Equal to smem_descriptor(smem_addr + offset,
/// fields) for every address of the shared window (below 2^18 bytes, so the field's 14 bits
/// never carry), and cheaper: the k steps of one tile share smem_addr's descriptor, which the
/// compiler computes once (an add a step instead of an and, a shift and an or).
__device__ __forceinline__ u64 smem_descriptor_at(u32 smem_addr, u32 offset, u64 fields) {
  return smem_descriptor(smem_addr, fields) + (u64)(offset >> 4);
}

/// A tensor map (CUtensorMap) as an opaque, 64-byte aligned kernel parameter.
struct alignas(64) TensorMap {
  u64 words[16];
};

}  // namespace argus
