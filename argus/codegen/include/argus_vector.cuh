// argus_vector.cuh: vector moves between global memory and registers (LDG/STG .64/.128).
// Raw bits only: the generated code converts each element (argus_convert.cuh) around them.
// The caller guarantees the alignment (it checks pointer, pitch and origin at run time and
// falls back to element accesses where they do not hold).
#pragma once
#include "argus_address.cuh"

namespace argus {

/// The bytes of one access when moving N elements of T: N * sizeof(T), at most 16.
template <int N, typename T>
__host__ __device__ constexpr int vector_access_bytes() { return N * (int)sizeof(T) < 16 ? N * (int)sizeof(T) : 16; }

/// N neighbouring elements, aligned for accesses of vector_access_bytes: the compiler moves
/// one as a single ld/st.global of N * sizeof(T) bytes (two of 16 bytes for 32).
template <int N, typename T>
struct alignas(vector_access_bytes<N, T>()) Vec {
  T e[N];
};

/// The N neighbouring elements at p (aligned to vector_access_bytes).
template <int N, typename T>
__device__ __forceinline__ Vec<N, T> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<N, T>*>(p);
}

/// v into the N neighbouring elements at p (aligned to vector_access_bytes).
template <int N, typename T>
__device__ __forceinline__ void store_vec(T* p, const Vec<N, T>& v) {
  *reinterpret_cast<Vec<N, T>*>(p) = v;
}

/// Whether p is aligned for the accesses load_vec/store_vec<N> make.
template <int N, typename T>
__device__ __forceinline__ bool vector_aligned(const T* p) {
  return (reinterpret_cast<u64>(p) % vector_access_bytes<N, T>()) == 0;
}

}  // namespace argus
