// argus_ldmatrix.cuh: warp-wide 8x8 b16 matrix loads and stores between shared memory and
// registers (ldmatrix / stmatrix). `Count` 8x8 matrices per call (1, 2 or 4); `Trans` transposes
// each matrix on the way. Each lane passes its own row address (lanes 0-7 matrix 0, 8-15
// matrix 1...). Both clobber memory, so the compiler keeps them in order with this thread's
// ordinary shared-memory accesses.
#pragma once
#include "argus_address.cuh"

namespace argus {

#define ARGUS_CHECK_MATRIX_COUNT(Count) \
  static_assert((Count) == 1 || (Count) == 2 || (Count) == 4, "matrix count must be 1, 2 or 4")

/// Load `Count` 8x8 b16 matrices from shared memory at `row` into `regs` (one u32 per matrix).
template <int Count, bool Trans>
__device__ __forceinline__ void ldmatrix(u32 (&regs)[Count], u32 row) {
  ARGUS_CHECK_MATRIX_COUNT(Count);
  if constexpr (Count == 1 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(regs[0]) : "r"(row) : "memory");
  else if constexpr (Count == 1 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(regs[0]) : "r"(row) : "memory");
  else if constexpr (Count == 2 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(regs[0]), "=r"(regs[1]) : "r"(row) : "memory");
  else if constexpr (Count == 2 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(regs[0]), "=r"(regs[1]) : "r"(row) : "memory");
  else if constexpr (Count == 4 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(regs[0]), "=r"(regs[1]), "=r"(regs[2]), "=r"(regs[3]) : "r"(row) : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(regs[0]), "=r"(regs[1]), "=r"(regs[2]), "=r"(regs[3]) : "r"(row) : "memory");
}

/// Store `Count` 8x8 b16 matrices from `regs` to shared memory at `row` (stmatrix, sm_90).
template <int Count, bool Trans>
__device__ __forceinline__ void stmatrix(u32 row, const u32 (&regs)[Count]) {
  ARGUS_CHECK_MATRIX_COUNT(Count);
  if constexpr (Count == 1 && !Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(row), "r"(regs[0]) : "memory");
  else if constexpr (Count == 1 && Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(row), "r"(regs[0]) : "memory");
  else if constexpr (Count == 2 && !Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(row), "r"(regs[0]),
                 "r"(regs[1]) : "memory");
  else if constexpr (Count == 2 && Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(row), "r"(regs[0]),
                 "r"(regs[1]) : "memory");
  else if constexpr (Count == 4 && !Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row),
                 "r"(regs[0]), "r"(regs[1]), "r"(regs[2]), "r"(regs[3]) : "memory");
  else
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row),
                 "r"(regs[0]), "r"(regs[1]), "r"(regs[2]), "r"(regs[3]) : "memory");
}

#undef ARGUS_CHECK_MATRIX_COUNT

}  // namespace argus
