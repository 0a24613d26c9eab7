// Two kernels that touch local memory, so the spill detection has something real to find.
// local_array: a register array indexed at run time lives on the stack (LDL/STL, stack frame).
// register_pressure: 48 values live at once under a 32-register cap (built with
// max_registers=32) make ptxas spill (spill store/load bytes).

extern "C" __global__ void local_array(float* out, const int* index) {
  float table[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) table[i] = out[i * 256 + threadIdx.x];
  for (int i = 0; i < 16; ++i) table[index[i] & 63] += 1.0f;
  out[threadIdx.x] = table[index[threadIdx.x] & 63];
}

extern "C" __global__ void register_pressure(float* out, const float* in) {
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) v[i] = in[i * 256 + threadIdx.x];
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < 48; ++i)
#pragma unroll
    for (int j = i + 1; j < 48; j += 7) acc += v[i] * v[j];
#pragma unroll
  for (int i = 0; i < 48; ++i) out[i * 256 + threadIdx.x] = v[i] * acc;
}
