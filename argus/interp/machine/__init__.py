"""The CPU interpreter's machine model: mbarriers, async ops, shared memory, scheduler.

Standalone NumPy; the IR evaluator drives it through `Machine` (see machine.py and
docs/interpreter-model.md).
"""

from .async_ops import GlobalTensor
from .dtypes import BF16, E4M3, FP16, FP32, INT32, ElementType, element_type
from .errors import (AsyncOpError, MachineError, MbarrierError, MemoryModelError,
                     RegisterInFlightError, SchedulerError)
from .machine import Machine
from .mbarrier import Mbarrier
from .memory import Hazard, Region, SharedMemory
from .registers import RegisterFragment
from .rounding import (bf16_bits, e4m3_bits, fp16_bits, round_to_bf16, round_to_e4m3,
                       round_to_fp16)
from .scheduler import (BlockedAgent, Completed, Deadlock, Faulted, RunResult,
                        StepBudgetExceeded)

__all__ = [
    "AsyncOpError", "BF16", "BlockedAgent", "Completed", "Deadlock", "E4M3", "ElementType",
    "FP16", "FP32", "Faulted", "GlobalTensor", "Hazard", "INT32", "Machine", "MachineError", "Mbarrier",
    "MbarrierError", "MemoryModelError", "Region", "RegisterFragment", "RegisterInFlightError",
    "RunResult", "SchedulerError", "SharedMemory", "StepBudgetExceeded", "bf16_bits",
    "e4m3_bits", "element_type", "fp16_bits", "round_to_bf16", "round_to_e4m3",
    "round_to_fp16",
]
