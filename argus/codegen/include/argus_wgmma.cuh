// argus_wgmma.cuh: warpgroup matrix multiply-accumulate (wgmma, sm_90a), m64nNk16 with bf16 or
// fp16 inputs and f32 accumulators. The shared-memory matrix descriptors are built elsewhere
// (from the layouts) and come in as u64. One wrapper per form; the N variants come from the
// operand-numbering table below, never from per-shape copies.
//
// Operand order inside each asm: the scalar operands first, as in/out copies ("+l", "+r": outputs
// must precede inputs in an asm operand list, so this keeps the accumulators' numbers fixed), then
// the N/2 accumulators. Smem-smem: %0 desc_a, %1 desc_b, %2 accumulate, %3.. d. Reg-smem: %0-%3
// the A fragment, %4 desc_b, %5 accumulate, %6.. d.
#pragma once
#include "argus_address.cuh"

namespace argus {

/// Input element type of a wgmma.
enum class WgmmaInput { bf16, f16 };

/// Make prior register and shared-memory accesses visible to the next wgmma (warpgroup-wide).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

/// Close the wgmma-group of this warpgroup's mma_async operations issued so far.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/// Wait until at most `Pending` wgmma-groups of this warpgroup are still in flight.
template <int Pending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(Pending >= 0 && Pending <= 7, "pending wgmma groups must be in [0, 7]");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// ---- operand-numbering table: accumulator lists for K = N/2 registers -------------------------
#define ARGUS_ACC_AT3_4 "%3, %4, %5, %6"
#define ARGUS_ACC_AT3_8 ARGUS_ACC_AT3_4 ", %7, %8, %9, %10"
#define ARGUS_ACC_AT3_12 ARGUS_ACC_AT3_8 ", %11, %12, %13, %14"
#define ARGUS_ACC_AT3_16 ARGUS_ACC_AT3_12 ", %15, %16, %17, %18"
#define ARGUS_ACC_AT3_20 ARGUS_ACC_AT3_16 ", %19, %20, %21, %22"
#define ARGUS_ACC_AT3_24 ARGUS_ACC_AT3_20 ", %23, %24, %25, %26"
#define ARGUS_ACC_AT3_28 ARGUS_ACC_AT3_24 ", %27, %28, %29, %30"
#define ARGUS_ACC_AT3_32 ARGUS_ACC_AT3_28 ", %31, %32, %33, %34"
#define ARGUS_ACC_AT3_36 ARGUS_ACC_AT3_32 ", %35, %36, %37, %38"
#define ARGUS_ACC_AT3_40 ARGUS_ACC_AT3_36 ", %39, %40, %41, %42"
#define ARGUS_ACC_AT3_44 ARGUS_ACC_AT3_40 ", %43, %44, %45, %46"
#define ARGUS_ACC_AT3_48 ARGUS_ACC_AT3_44 ", %47, %48, %49, %50"
#define ARGUS_ACC_AT3_52 ARGUS_ACC_AT3_48 ", %51, %52, %53, %54"
#define ARGUS_ACC_AT3_56 ARGUS_ACC_AT3_52 ", %55, %56, %57, %58"
#define ARGUS_ACC_AT3_60 ARGUS_ACC_AT3_56 ", %59, %60, %61, %62"
#define ARGUS_ACC_AT3_64 ARGUS_ACC_AT3_60 ", %63, %64, %65, %66"
#define ARGUS_ACC_AT3_68 ARGUS_ACC_AT3_64 ", %67, %68, %69, %70"
#define ARGUS_ACC_AT3_72 ARGUS_ACC_AT3_68 ", %71, %72, %73, %74"
#define ARGUS_ACC_AT3_76 ARGUS_ACC_AT3_72 ", %75, %76, %77, %78"
#define ARGUS_ACC_AT3_80 ARGUS_ACC_AT3_76 ", %79, %80, %81, %82"
#define ARGUS_ACC_AT3_84 ARGUS_ACC_AT3_80 ", %83, %84, %85, %86"
#define ARGUS_ACC_AT3_88 ARGUS_ACC_AT3_84 ", %87, %88, %89, %90"
#define ARGUS_ACC_AT3_92 ARGUS_ACC_AT3_88 ", %91, %92, %93, %94"
#define ARGUS_ACC_AT3_96 ARGUS_ACC_AT3_92 ", %95, %96, %97, %98"
#define ARGUS_ACC_AT3_100 ARGUS_ACC_AT3_96 ", %99, %100, %101, %102"
#define ARGUS_ACC_AT3_104 ARGUS_ACC_AT3_100 ", %103, %104, %105, %106"
#define ARGUS_ACC_AT3_108 ARGUS_ACC_AT3_104 ", %107, %108, %109, %110"
#define ARGUS_ACC_AT3_112 ARGUS_ACC_AT3_108 ", %111, %112, %113, %114"
#define ARGUS_ACC_AT3_116 ARGUS_ACC_AT3_112 ", %115, %116, %117, %118"
#define ARGUS_ACC_AT3_120 ARGUS_ACC_AT3_116 ", %119, %120, %121, %122"
#define ARGUS_ACC_AT3_124 ARGUS_ACC_AT3_120 ", %123, %124, %125, %126"
#define ARGUS_ACC_AT3_128 ARGUS_ACC_AT3_124 ", %127, %128, %129, %130"

#define ARGUS_ACC_AT6_4 "%6, %7, %8, %9"
#define ARGUS_ACC_AT6_8 ARGUS_ACC_AT6_4 ", %10, %11, %12, %13"
#define ARGUS_ACC_AT6_12 ARGUS_ACC_AT6_8 ", %14, %15, %16, %17"
#define ARGUS_ACC_AT6_16 ARGUS_ACC_AT6_12 ", %18, %19, %20, %21"
#define ARGUS_ACC_AT6_20 ARGUS_ACC_AT6_16 ", %22, %23, %24, %25"
#define ARGUS_ACC_AT6_24 ARGUS_ACC_AT6_20 ", %26, %27, %28, %29"
#define ARGUS_ACC_AT6_28 ARGUS_ACC_AT6_24 ", %30, %31, %32, %33"
#define ARGUS_ACC_AT6_32 ARGUS_ACC_AT6_28 ", %34, %35, %36, %37"
#define ARGUS_ACC_AT6_36 ARGUS_ACC_AT6_32 ", %38, %39, %40, %41"
#define ARGUS_ACC_AT6_40 ARGUS_ACC_AT6_36 ", %42, %43, %44, %45"
#define ARGUS_ACC_AT6_44 ARGUS_ACC_AT6_40 ", %46, %47, %48, %49"
#define ARGUS_ACC_AT6_48 ARGUS_ACC_AT6_44 ", %50, %51, %52, %53"
#define ARGUS_ACC_AT6_52 ARGUS_ACC_AT6_48 ", %54, %55, %56, %57"
#define ARGUS_ACC_AT6_56 ARGUS_ACC_AT6_52 ", %58, %59, %60, %61"
#define ARGUS_ACC_AT6_60 ARGUS_ACC_AT6_56 ", %62, %63, %64, %65"
#define ARGUS_ACC_AT6_64 ARGUS_ACC_AT6_60 ", %66, %67, %68, %69"
#define ARGUS_ACC_AT6_68 ARGUS_ACC_AT6_64 ", %70, %71, %72, %73"
#define ARGUS_ACC_AT6_72 ARGUS_ACC_AT6_68 ", %74, %75, %76, %77"
#define ARGUS_ACC_AT6_76 ARGUS_ACC_AT6_72 ", %78, %79, %80, %81"
#define ARGUS_ACC_AT6_80 ARGUS_ACC_AT6_76 ", %82, %83, %84, %85"
#define ARGUS_ACC_AT6_84 ARGUS_ACC_AT6_80 ", %86, %87, %88, %89"
#define ARGUS_ACC_AT6_88 ARGUS_ACC_AT6_84 ", %90, %91, %92, %93"
#define ARGUS_ACC_AT6_92 ARGUS_ACC_AT6_88 ", %94, %95, %96, %97"
#define ARGUS_ACC_AT6_96 ARGUS_ACC_AT6_92 ", %98, %99, %100, %101"
#define ARGUS_ACC_AT6_100 ARGUS_ACC_AT6_96 ", %102, %103, %104, %105"
#define ARGUS_ACC_AT6_104 ARGUS_ACC_AT6_100 ", %106, %107, %108, %109"
#define ARGUS_ACC_AT6_108 ARGUS_ACC_AT6_104 ", %110, %111, %112, %113"
#define ARGUS_ACC_AT6_112 ARGUS_ACC_AT6_108 ", %114, %115, %116, %117"
#define ARGUS_ACC_AT6_116 ARGUS_ACC_AT6_112 ", %118, %119, %120, %121"
#define ARGUS_ACC_AT6_120 ARGUS_ACC_AT6_116 ", %122, %123, %124, %125"
#define ARGUS_ACC_AT6_124 ARGUS_ACC_AT6_120 ", %126, %127, %128, %129"
#define ARGUS_ACC_AT6_128 ARGUS_ACC_AT6_124 ", %130, %131, %132, %133"

#define ARGUS_ACC_OPS_4 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define ARGUS_ACC_OPS_8 ARGUS_ACC_OPS_4, "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define ARGUS_ACC_OPS_12 ARGUS_ACC_OPS_8, "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
#define ARGUS_ACC_OPS_16 ARGUS_ACC_OPS_12, "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define ARGUS_ACC_OPS_20 ARGUS_ACC_OPS_16, "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
#define ARGUS_ACC_OPS_24 ARGUS_ACC_OPS_20, "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define ARGUS_ACC_OPS_28 ARGUS_ACC_OPS_24, "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
#define ARGUS_ACC_OPS_32 ARGUS_ACC_OPS_28, "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define ARGUS_ACC_OPS_36 ARGUS_ACC_OPS_32, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
#define ARGUS_ACC_OPS_40 ARGUS_ACC_OPS_36, "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define ARGUS_ACC_OPS_44 ARGUS_ACC_OPS_40, "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
#define ARGUS_ACC_OPS_48 ARGUS_ACC_OPS_44, "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define ARGUS_ACC_OPS_52 ARGUS_ACC_OPS_48, "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
#define ARGUS_ACC_OPS_56 ARGUS_ACC_OPS_52, "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define ARGUS_ACC_OPS_60 ARGUS_ACC_OPS_56, "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
#define ARGUS_ACC_OPS_64 ARGUS_ACC_OPS_60, "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define ARGUS_ACC_OPS_68 ARGUS_ACC_OPS_64, "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
#define ARGUS_ACC_OPS_72 ARGUS_ACC_OPS_68, "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define ARGUS_ACC_OPS_76 ARGUS_ACC_OPS_72, "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
#define ARGUS_ACC_OPS_80 ARGUS_ACC_OPS_76, "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define ARGUS_ACC_OPS_84 ARGUS_ACC_OPS_80, "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
#define ARGUS_ACC_OPS_88 ARGUS_ACC_OPS_84, "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define ARGUS_ACC_OPS_92 ARGUS_ACC_OPS_88, "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91])
#define ARGUS_ACC_OPS_96 ARGUS_ACC_OPS_92, "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define ARGUS_ACC_OPS_100 ARGUS_ACC_OPS_96, "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99])
#define ARGUS_ACC_OPS_104 ARGUS_ACC_OPS_100, "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define ARGUS_ACC_OPS_108 ARGUS_ACC_OPS_104, "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107])
#define ARGUS_ACC_OPS_112 ARGUS_ACC_OPS_108, "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define ARGUS_ACC_OPS_116 ARGUS_ACC_OPS_112, "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115])
#define ARGUS_ACC_OPS_120 ARGUS_ACC_OPS_116, "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define ARGUS_ACC_OPS_124 ARGUS_ACC_OPS_120, "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123])
#define ARGUS_ACC_OPS_128 ARGUS_ACC_OPS_124, "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

template <int N>
struct WgmmaShape;  // specialised below for N = 8, 16, ..., 256

#define ARGUS_WGMMA_SS_ASM(N, K, T, TA, TB)                                                   \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"                             \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T " {" ARGUS_ACC_AT3_##K \
               "}, %0, %1, p, 1, 1, " TA ", " TB ";\n\t}"                                     \
               : "+l"(desc_a), "+l"(desc_b), "+r"(scale_d), ARGUS_ACC_OPS_##K)

#define ARGUS_WGMMA_RS_ASM(N, K, T, TB)                                                            \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %5, 0;\n\t"                                  \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T " {" ARGUS_ACC_AT6_##K      \
               "}, {%0, %1, %2, %3}, %4, p, 1, 1, " TB ";\n\t}"                                     \
               : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+l"(desc_b), "+r"(scale_d), ARGUS_ACC_OPS_##K)

#define ARGUS_WGMMA_SHAPE(N, K)                                                                   \
  template <>                                                                                    \
  struct WgmmaShape<N> {                                                                         \
    template <WgmmaInput In, int TransA, int TransB>                                             \
    __device__ __forceinline__ static void ss(float* d, u64 desc_a, u64 desc_b, u32 scale_d) {   \
      if constexpr (In == WgmmaInput::bf16 && TransA == 0 && TransB == 0) ARGUS_WGMMA_SS_ASM(N, K, "bf16", "0", "0"); \
      else if constexpr (In == WgmmaInput::bf16 && TransA == 0) ARGUS_WGMMA_SS_ASM(N, K, "bf16", "0", "1");           \
      else if constexpr (In == WgmmaInput::bf16 && TransB == 0) ARGUS_WGMMA_SS_ASM(N, K, "bf16", "1", "0");           \
      else if constexpr (In == WgmmaInput::bf16) ARGUS_WGMMA_SS_ASM(N, K, "bf16", "1", "1");                          \
      else if constexpr (TransA == 0 && TransB == 0) ARGUS_WGMMA_SS_ASM(N, K, "f16", "0", "0");                       \
      else if constexpr (TransA == 0) ARGUS_WGMMA_SS_ASM(N, K, "f16", "0", "1");                                      \
      else if constexpr (TransB == 0) ARGUS_WGMMA_SS_ASM(N, K, "f16", "1", "0");                                      \
      else ARGUS_WGMMA_SS_ASM(N, K, "f16", "1", "1");                                                                 \
    }                                                                                            \
    template <WgmmaInput In, int TransB>                                                         \
    __device__ __forceinline__ static void rs(float* d, u32 a0, u32 a1, u32 a2, u32 a3, u64 desc_b, \
                                              u32 scale_d) {                                     \
      if constexpr (In == WgmmaInput::bf16 && TransB == 0) ARGUS_WGMMA_RS_ASM(N, K, "bf16", "0"); \
      else if constexpr (In == WgmmaInput::bf16) ARGUS_WGMMA_RS_ASM(N, K, "bf16", "1");          \
      else if constexpr (TransB == 0) ARGUS_WGMMA_RS_ASM(N, K, "f16", "0");                      \
      else ARGUS_WGMMA_RS_ASM(N, K, "f16", "1");                                                 \
    }                                                                                            \
    __device__ __forceinline__ static void fence_operands(float* d) {                           \
      asm volatile("" : ARGUS_ACC_OPS_##K::"memory");                                           \
    }                                                                                            \
  };

ARGUS_WGMMA_SHAPE(8, 4)
ARGUS_WGMMA_SHAPE(16, 8)
ARGUS_WGMMA_SHAPE(24, 12)
ARGUS_WGMMA_SHAPE(32, 16)
ARGUS_WGMMA_SHAPE(40, 20)
ARGUS_WGMMA_SHAPE(48, 24)
ARGUS_WGMMA_SHAPE(56, 28)
ARGUS_WGMMA_SHAPE(64, 32)
ARGUS_WGMMA_SHAPE(72, 36)
ARGUS_WGMMA_SHAPE(80, 40)
ARGUS_WGMMA_SHAPE(88, 44)
ARGUS_WGMMA_SHAPE(96, 48)
ARGUS_WGMMA_SHAPE(104, 52)
ARGUS_WGMMA_SHAPE(112, 56)
ARGUS_WGMMA_SHAPE(120, 60)
ARGUS_WGMMA_SHAPE(128, 64)
ARGUS_WGMMA_SHAPE(136, 68)
ARGUS_WGMMA_SHAPE(144, 72)
ARGUS_WGMMA_SHAPE(152, 76)
ARGUS_WGMMA_SHAPE(160, 80)
ARGUS_WGMMA_SHAPE(168, 84)
ARGUS_WGMMA_SHAPE(176, 88)
ARGUS_WGMMA_SHAPE(184, 92)
ARGUS_WGMMA_SHAPE(192, 96)
ARGUS_WGMMA_SHAPE(200, 100)
ARGUS_WGMMA_SHAPE(208, 104)
ARGUS_WGMMA_SHAPE(216, 108)
ARGUS_WGMMA_SHAPE(224, 112)
ARGUS_WGMMA_SHAPE(232, 116)
ARGUS_WGMMA_SHAPE(240, 120)
ARGUS_WGMMA_SHAPE(248, 124)
ARGUS_WGMMA_SHAPE(256, 128)

#undef ARGUS_WGMMA_SHAPE
#undef ARGUS_WGMMA_SS_ASM
#undef ARGUS_WGMMA_RS_ASM
#undef ARGUS_ACC_AT3_4
#undef ARGUS_ACC_AT6_4
#undef ARGUS_ACC_OPS_4
#undef ARGUS_ACC_AT3_8
#undef ARGUS_ACC_AT6_8
#undef ARGUS_ACC_OPS_8
#undef ARGUS_ACC_AT3_12
#undef ARGUS_ACC_AT6_12
#undef ARGUS_ACC_OPS_12
#undef ARGUS_ACC_AT3_16
#undef ARGUS_ACC_AT6_16
#undef ARGUS_ACC_OPS_16
#undef ARGUS_ACC_AT3_20
#undef ARGUS_ACC_AT6_20
#undef ARGUS_ACC_OPS_20
#undef ARGUS_ACC_AT3_24
#undef ARGUS_ACC_AT6_24
#undef ARGUS_ACC_OPS_24
#undef ARGUS_ACC_AT3_28
#undef ARGUS_ACC_AT6_28
#undef ARGUS_ACC_OPS_28
#undef ARGUS_ACC_AT3_32
#undef ARGUS_ACC_AT6_32
#undef ARGUS_ACC_OPS_32
#undef ARGUS_ACC_AT3_36
#undef ARGUS_ACC_AT6_36
#undef ARGUS_ACC_OPS_36
#undef ARGUS_ACC_AT3_40
#undef ARGUS_ACC_AT6_40
#undef ARGUS_ACC_OPS_40
#undef ARGUS_ACC_AT3_44
#undef ARGUS_ACC_AT6_44
#undef ARGUS_ACC_OPS_44
#undef ARGUS_ACC_AT3_48
#undef ARGUS_ACC_AT6_48
#undef ARGUS_ACC_OPS_48
#undef ARGUS_ACC_AT3_52
#undef ARGUS_ACC_AT6_52
#undef ARGUS_ACC_OPS_52
#undef ARGUS_ACC_AT3_56
#undef ARGUS_ACC_AT6_56
#undef ARGUS_ACC_OPS_56
#undef ARGUS_ACC_AT3_60
#undef ARGUS_ACC_AT6_60
#undef ARGUS_ACC_OPS_60
#undef ARGUS_ACC_AT3_64
#undef ARGUS_ACC_AT6_64
#undef ARGUS_ACC_OPS_64
#undef ARGUS_ACC_AT3_68
#undef ARGUS_ACC_AT6_68
#undef ARGUS_ACC_OPS_68
#undef ARGUS_ACC_AT3_72
#undef ARGUS_ACC_AT6_72
#undef ARGUS_ACC_OPS_72
#undef ARGUS_ACC_AT3_76
#undef ARGUS_ACC_AT6_76
#undef ARGUS_ACC_OPS_76
#undef ARGUS_ACC_AT3_80
#undef ARGUS_ACC_AT6_80
#undef ARGUS_ACC_OPS_80
#undef ARGUS_ACC_AT3_84
#undef ARGUS_ACC_AT6_84
#undef ARGUS_ACC_OPS_84
#undef ARGUS_ACC_AT3_88
#undef ARGUS_ACC_AT6_88
#undef ARGUS_ACC_OPS_88
#undef ARGUS_ACC_AT3_92
#undef ARGUS_ACC_AT6_92
#undef ARGUS_ACC_OPS_92
#undef ARGUS_ACC_AT3_96
#undef ARGUS_ACC_AT6_96
#undef ARGUS_ACC_OPS_96
#undef ARGUS_ACC_AT3_100
#undef ARGUS_ACC_AT6_100
#undef ARGUS_ACC_OPS_100
#undef ARGUS_ACC_AT3_104
#undef ARGUS_ACC_AT6_104
#undef ARGUS_ACC_OPS_104
#undef ARGUS_ACC_AT3_108
#undef ARGUS_ACC_AT6_108
#undef ARGUS_ACC_OPS_108
#undef ARGUS_ACC_AT3_112
#undef ARGUS_ACC_AT6_112
#undef ARGUS_ACC_OPS_112
#undef ARGUS_ACC_AT3_116
#undef ARGUS_ACC_AT6_116
#undef ARGUS_ACC_OPS_116
#undef ARGUS_ACC_AT3_120
#undef ARGUS_ACC_AT6_120
#undef ARGUS_ACC_OPS_120
#undef ARGUS_ACC_AT3_124
#undef ARGUS_ACC_AT6_124
#undef ARGUS_ACC_OPS_124
#undef ARGUS_ACC_AT3_128
#undef ARGUS_ACC_AT6_128
#undef ARGUS_ACC_OPS_128

#define ARGUS_CHECK_WGMMA(N, TransA, TransB)                                                      \
  static_assert((N) >= 8 && (N) <= 256 && (N) % 8 == 0, "wgmma N must be a multiple of 8 in [8, 256]"); \
  static_assert(((TransA) == 0 || (TransA) == 1) && ((TransB) == 0 || (TransB) == 1),              \
                "wgmma transpose flags must be 0 or 1")

/// D(64xN, f32) (+)= A(64x16, smem via desc_a) * B(16xN, smem via desc_b); `accumulate` false
/// overwrites D. TransA/TransB select the major-ness of A and B in shared memory.
template <int N, WgmmaInput In, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], u64 desc_a, u64 desc_b, bool accumulate) {
  ARGUS_CHECK_WGMMA(N, TransA, TransB);
  WgmmaShape<N>::template ss<In, TransA, TransB>(d, desc_a, desc_b, accumulate ? 1u : 0u);
}

/// D(64xN, f32) (+)= A(64x16, this thread's 4-register fragment) * B(16xN, smem via desc_b).
template <int N, WgmmaInput In, int TransB = 0>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const u32 (&a)[4], u64 desc_b, bool accumulate) {
  ARGUS_CHECK_WGMMA(N, 0, TransB);
  WgmmaShape<N>::template rs<In, TransB>(d, a[0], a[1], a[2], a[3], desc_b, accumulate ? 1u : 0u);
}

/// Pin the accumulators in place (no instruction): the compiler may not move their reads or
/// writes across this point, so none slips between an mma_async and its wgmma_wait_group.
template <int N>
__device__ __forceinline__ void wgmma_fence_accumulators(float (&d)[N / 2]) {
  ARGUS_CHECK_WGMMA(N, 0, 0);
  WgmmaShape<N>::fence_operands(d);
}

#undef ARGUS_CHECK_WGMMA

}  // namespace argus
