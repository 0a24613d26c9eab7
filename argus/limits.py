"""The Hopper (sm_90a, H100/H200 SXM) hardware limits, stated once.

Every check, budget and message that depends on one of these imports it from here: the
frontend, the verifier's resource pass, the code generator, the interpreter, the runtime,
the library's knob table and the agent. Sources: the CUDA C++ Programming Guide's table of
compute capability 9.0, the PTX ISA (setmaxnreg, bar.sync, cp.async.bulk.tensor) and the
H100/H200 SXM datasheets. Imports nothing (tests/test_limits.py checks that no other
module restates these numbers).

The TMA box limit is also argus.layout.hopper.tma.MAX_BOX_DIM: the layout algebra imports
nothing of Argus, so it keeps its own copy, and tests/test_limits.py checks the two agree.
"""

# --- the machine --------------------------------------------------------------------
SM_COUNT = 132                  # SMs of an H100 SXM / H200 SXM: one persistent block each
WARP_SIZE = 32                  # threads of a warp
WARPGROUP_THREADS = 128         # 4 warps: the unit wgmma and setmaxnreg act on

# --- threads and blocks -------------------------------------------------------------
MAX_THREADS_PER_BLOCK = 1024    # blockDim.x * y * z at most
MAX_THREADS_PER_SM = 2048       # resident threads of one SM
MAX_BLOCKS_PER_SM = 32          # resident blocks of one SM
MAX_CLUSTER_SIZE = 8            # blocks per cluster without the non-portable opt-in
MAX_GRID_DIMS = (2 ** 31 - 1, 65535, 65535)   # gridDim.x, .y, .z at most

# --- shared memory ------------------------------------------------------------------
SMEM_PER_BLOCK = 227 * 1024     # 232448 B: the opt-in maximum of dynamic shared memory a block can have
SMEM_PER_SM = 228 * 1024        # the SM's shared memory (the L1 carve-out at its largest)
SMEM_RESERVED_PER_BLOCK = 1024  # what the runtime keeps of the SM's shared memory per resident block
SMEM_BASE_ALIGN = 1024         # the 128B swizzle's 1024-byte alignment: the generated kernel
                                # aligns its dynamic shared memory by hand, asking for this
                                # much more than its tiles take


def smem_fits_sm(block_bytes: int, blocks_per_sm: int) -> bool:
    """Can `blocks_per_sm` blocks of `block_bytes` of dynamic shared memory each be resident
    on one SM at once (each also costs the runtime's reserved kilobyte)?"""
    return blocks_per_sm * (block_bytes + SMEM_RESERVED_PER_BLOCK) <= SMEM_PER_SM


MBARRIER_BYTES = 8              # one mbarrier object in shared memory (8-byte aligned)

# --- registers ----------------------------------------------------------------------
REGISTERS_PER_SM = 64 * 1024    # 65536 32-bit registers in one SM's register file
MAX_REGISTERS_PER_THREAD = 255  # the most registers ptxas gives one thread
REGISTER_GRANULE = 8            # registers per thread are allocated (and setmaxnreg moves) in steps of 8
SETMAXNREG_MIN = 24             # setmaxnreg.dec/.inc take 24..256 registers per thread ...
SETMAXNREG_MAX = 256            # ... in steps of REGISTER_GRANULE


def registers_at_entry(threads: int, blocks_per_sm: int = 1) -> int:
    """Registers per thread a block of `threads` threads starts with when `blocks_per_sm`
    such blocks share the SM's register file: in steps of REGISTER_GRANULE, at most
    SETMAXNREG_MAX (255 addressable). setmaxnreg moves registers within a block's own pool
    (this times `threads`), never between blocks."""
    return min(SETMAXNREG_MAX, REGISTERS_PER_SM // (threads * blocks_per_sm)
               // REGISTER_GRANULE * REGISTER_GRANULE)

# --- barriers -----------------------------------------------------------------------
NAMED_BARRIERS = 16             # bar.sync ids 0..15 per block (__syncthreads is id 0)
COMPILER_BARRIERS = range(12, 16)  # ids the code generator keeps for its warpgroup exchanges
                                   # (one per warpgroup of the block), never the user's

# --- TMA ----------------------------------------------------------------------------
TMA_BOX_MAX_DIM = 256           # elements of a TMA box along any one dimension
