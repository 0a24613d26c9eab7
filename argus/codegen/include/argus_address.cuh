// argus_address.cuh: integer types and the shared-memory address every other header takes.
// Wrappers take 32-bit shared-window addresses (what PTX's .shared state space uses), so the
// conversion from a generic pointer happens once, here.
#pragma once

namespace argus {

using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;

static_assert(sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8, "argus integer widths");

/// Entry `i` of the constant table `Values...`: a register's coordinate where the layout has
/// no affine form (a wgmma accumulator of width 192). `i` is an unrolled counter, so the
/// compiler folds the lookup; NVRTC takes this where it refuses a C compound literal.
template <int... Values>
__device__ __forceinline__ constexpr int table(int i) {
  constexpr int entries[] = {Values...};
  return entries[i];
}

/// The 32-bit .shared-window address of a generic pointer into this CTA's shared memory.
__device__ __forceinline__ u32 shared_address(const void* ptr) {
  return static_cast<u32>(__cvta_generic_to_shared(ptr));
}

/// The Hopper swizzle of an absolute .shared address: bits [4, 4 + Bits) ^= bits [7, 7 + Bits)
/// (Bits 3, 2, 1 for the 128B, 64B, 32B swizzles): where TMA writes, and wgmma reads, the
/// 16-byte unit at unswizzled address `a` of a swizzled tile.
template <int Bits>
__device__ __forceinline__ u32 swizzle_address(u32 a) {
  static_assert(Bits >= 1 && Bits <= 3, "the Hopper swizzles move 1 to 3 address bits");
  return a ^ ((a >> 3) & (((1u << Bits) - 1u) << 4));
}

/// Store 32 bits at a .shared-window address (st.shared.b32).
__device__ __forceinline__ void st_shared_u32(u32 addr, u32 value) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(value) : "memory");
}

}  // namespace argus
