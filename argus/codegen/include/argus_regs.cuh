// argus_regs.cuh: per-warpgroup register reallocation (setmaxnreg, sm_90a).
// Takes effect only when the kernel has a register cap at entry (__launch_bounds__(T, 1)) and
// each role is one branch of a single if/else; ptxas warns (C7508) when it ignores it.
#pragma once

namespace argus {

/// Raise this warpgroup's register limit to `Regs` per thread (a consumer role).
template <int Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Regs >= 24 && Regs <= 256 && Regs % 8 == 0,
                "setmaxnreg count must be a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}

/// Lower this warpgroup's register limit to `Regs` per thread (a producer role).
template <int Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Regs >= 24 && Regs <= 256 && Regs % 8 == 0,
                "setmaxnreg count must be a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}

}  // namespace argus
