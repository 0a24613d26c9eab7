// setmaxnreg in a kernel with no register cap at entry (no __launch_bounds__(T, 1)): ptxas
// ignores it and says so (C7508), which check_kernel_binary must report.
#include "argus_regs.cuh"
extern "C" __global__ void no_cap(float* out) {
  if (threadIdx.x < 128) { argus::setmaxnreg_dec<40>(); out[threadIdx.x] = 1.0f; }
  else { argus::setmaxnreg_inc<232>(); out[threadIdx.x] = 2.0f; }
}
