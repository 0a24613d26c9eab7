// argus_grid_dependency.cuh: programmatic dependent launch (PTX ISA "griddepcontrol").
// Every generated kernel starts with both: it waits for the grids it depends on, then lets
// the grids that depend on it be scheduled. Launched without the programmatic
// stream-serialization attribute (the default) a kernel has no such grids and both are
// no-ops; launched with it (ARGUS_PDL=1, argus/runtime/driver_launch.py) the next kernel's
// blocks start while this one drains and wait at their first line, before any memory access.
#pragma once

namespace argus {

/// Wait until every prerequisite grid has completed and its memory operations are visible.
__device__ __forceinline__ void grid_dependency_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

/// Let the dependent grids be scheduled once every block of this grid has said so (or ended).
__device__ __forceinline__ void launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

}  // namespace argus
