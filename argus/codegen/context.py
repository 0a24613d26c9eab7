"""The state of one kernel's lowering: C values of IR values, kernel parameters, the
shared-memory plan and the tensor maps the host must create."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.ir.nodes import Kernel, Op, Value
from argus.ir.types import DType

from .emitter import Emitter
from .errors import CodegenError
from .values import Fragment, Scalar, TensorParam, c_float

SMEM_ALIGN_SWIZZLED = 1024     # the 128B swizzle pattern repeats every 1024 B
SMEM_ALIGN_PLAIN = 128


@dataclass(frozen=True)
class TensorMapSpec:
    """A tensor map the host encodes: `box` = (inner columns, rows), innermost first."""
    param: str            # C parameter name
    tensor: str           # the kernel parameter (global tensor) it describes
    dtype: DType
    box: tuple[int, int]
    swizzle: str


@dataclass(frozen=True)
class ParamSpec:
    kind: str             # "pointer" | "size" | "tensormap"
    name: str             # C name
    source: str           # tensor or symbol name in the kernel signature
    tensormap: TensorMapSpec | None = None
    # a pointer the kernel's code dereferences (False: the tensor is reached only through
    # its tensor maps, which carry the row pitch, so a row-strided view may be passed)
    addressed: bool = True


@dataclass
class Context:
    kernel: Kernel
    em: Emitter
    debug: bool = False
    values: dict[int, object] = field(default_factory=dict)
    tensors: dict[str, TensorParam] = field(default_factory=dict)
    tensor_maps: dict[tuple, TensorMapSpec] = field(default_factory=dict)
    smem_bytes: int = 0
    role_warpgroups: tuple[int, ...] | None = None
    fragments: list[Fragment] = field(default_factory=list)
    following: list[Op] = field(default_factory=list)   # ops after the current one, same block
    geometries: dict[str, object] = field(default_factory=dict)   # smem buffer -> geometry
    default_regs: int = 0          # registers per thread at entry (65536 / block threads)
    exchange_bytes: int = 0        # per-warpgroup shared memory for cross-thread exchanges
    accumulators: set = field(default_factory=set)   # ids of the values wgmma accumulates into
    walked: dict[int, str] = field(default_factory=dict)   # id(walked op) -> its running sum
    unrolled: int = 0              # loops around the current op that are emitted unrolled

    # ---- values -------------------------------------------------------------------------
    def bind(self, value: Value, cvalue) -> None:
        self.values[id(value)] = cvalue

    def get(self, operand, op: Op | None = None):
        if isinstance(operand, bool):
            return Scalar("true" if operand else "false")
        if isinstance(operand, int):
            return Scalar(str(operand), operand)
        if isinstance(operand, float):
            return Scalar(c_float(operand))
        try:
            return self.values[id(operand)]
        except KeyError:
            raise CodegenError(f"value %{operand.name} is used outside the region that "
                               "defines it", op.loc if op else None) from None

    def expr(self, operand, op: Op | None = None) -> str:
        v = self.get(operand, op)
        if not isinstance(v, Scalar):
            raise CodegenError(f"expected a scalar, got {type(v).__name__}",
                               op.loc if op else None)
        return v.expr

    def scalar(self, op: Op, ctype: str, text: str, nonneg: bool = False,
               lo: int | None = None) -> None:
        """`const ctype name = text;` for the op's one result (with what is known of its
        lower bound)."""
        name = self.em.name(op.result.name)
        self.em.line(f"const {ctype} {name} = {text};")
        self.bind(op.result, Scalar(name, lo if lo is not None else (0 if nonneg else None)))

    def lower_bound(self, operand, op: Op | None = None) -> int | None:
        v = self.get(operand, op)
        return v.lo if isinstance(v, Scalar) and not isinstance(operand, bool) else None

    def nonneg(self, operand, op: Op | None = None) -> bool:
        lo = self.lower_bound(operand, op)
        return lo is not None and lo >= 0

    # ---- resources ----------------------------------------------------------------------
    def allocate_smem(self, nbytes: int, align: int) -> int:
        offset = -(-self.smem_bytes // align) * align
        self.smem_bytes = offset + nbytes
        return offset

    def tensor_map(self, tensor: TensorParam, box: tuple[int, int], swizzle: str) -> str:
        key = (tensor.name, box, swizzle)
        if key not in self.tensor_maps:
            name = f"tmap_{tensor.name}_{box[1]}x{box[0]}"
            if swizzle != "none":
                name += f"_sw{swizzle[:-1]}"
            self.tensor_maps[key] = TensorMapSpec(name, tensor.name, tensor.dtype, box, swizzle)
        return self.tensor_maps[key].param
