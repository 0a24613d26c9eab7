"""The op table's C templates compile against argus_math.cuh for sm_90a (each filled with
register names, one kernel per op), and the wrappers lower to the instructions their comments
name: one MUFU.EX2 per exp, MUFU.RSQ for rsqrt, MUFU.RCP for the logistic ones, no call or
local memory. On an sm_90 GPU with nvcc, tests/codegen/math_ulp.cu measures every wrapper
over all 2^32 inputs and the bounds the header states are checked against it."""

import re
import subprocess
from pathlib import Path

import pytest

from argus.ir import OPS
from argus.ir.ops.math import POLY, REDUCTIONS
from argus.runtime import BuildOptions, KernelCache, build_kernel
from argus.runtime.toolchain import ARGUS_HEADER_DIR, find_tool, nvrtc_identity

CAN_COMPILE = find_tool("nvcc") is not None or nvrtc_identity() is not None
CAN_DISASSEMBLE = bool(find_tool("cuobjdump") or find_tool("nvdisasm"))
# the elementwise math ops (the arith family has C templates too, over ints: codegen of
# uniform scalars, tested with the rest of codegen)
TEMPLATED = [s for s in OPS.values() if s.cuda is not None and s.family == "math"]
ULP_PROGRAM = Path(__file__).parent / "math_ulp.cu"


def _kernel_name(opcode: str) -> str:
    return "op_" + opcode.replace(".", "_")


def source() -> str:
    """One kernel per templated op (and per reduction combine): out = template(in...)."""
    lines = ['#include "argus_math.cuh"']
    for spec in TEMPLATED:
        args = {o.name: f"in[threadIdx.x + {128 * i}]" for i, o in enumerate(spec.operands)}
        lines.append(f'extern "C" __global__ void {_kernel_name(spec.opcode)}'
                     f"(const float* in, float* out) {{ out[threadIdx.x] = "
                     f"{spec.cuda.format(**args)}; }}")
    for name, template in POLY.items():      # the FP32-unit variants (poly_every)
        lines.append(f'extern "C" __global__ void op_poly_{name}(const float* in, float* out) '
                     f"{{ out[threadIdx.x] = {template.format(x='in[threadIdx.x]')}; }}")
    for kind, (_, combine) in REDUCTIONS.items():
        body = combine.format(lhs="in[threadIdx.x]", rhs="in[threadIdx.x + 1]")
        lines.append(f'extern "C" __global__ void op_reduce_{kind}(const float* in, float* out) '
                     f"{{ out[threadIdx.x] = {body}; }}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def entry(tmp_path_factory):
    if not CAN_COMPILE:
        pytest.skip("neither nvcc nor cuda-python's NVRTC is available")
    return build_kernel(source(), BuildOptions(), KernelCache(tmp_path_factory.mktemp("math")))


def test_every_template_compiles(entry):
    assert entry.cubin.startswith(b"\x7fELF")


# the MUFU instructions each wrapper uses (the library functions' polynomials use none or ex2)
MUFU = {"math.exp2": ["MUFU.EX2"], "math.exp": ["MUFU.EX2"], "math.rsqrt": ["MUFU.RSQ"],
        "math.sigmoid": ["MUFU.EX2", "MUFU.RCP"], "math.silu": ["MUFU.EX2", "MUFU.RCP"],
        "math.gelu_tanh": ["MUFU.EX2", "MUFU.RCP"], "math.abs": [], "math.log": [],
        "math.log2": []}


@pytest.mark.skipif(not CAN_DISASSEMBLE, reason="needs cuobjdump or nvdisasm")
@pytest.mark.parametrize("opcode", sorted(MUFU))
def test_wrappers_lower_to_their_instructions(entry, opcode):
    insts = entry.sass().instructions(_kernel_name(opcode))
    assert sorted(i.opcode for i in insts if i.base == "MUFU") == sorted(MUFU[opcode])
    assert not [i for i in insts if i.base in ("CALL", "LDL", "STL")], opcode


@pytest.mark.skipif(not CAN_DISASSEMBLE, reason="needs cuobjdump or nvdisasm")
@pytest.mark.parametrize("name", sorted(POLY))
def test_the_polynomial_variants_use_no_mufu(entry, name):
    insts = entry.sass().instructions(f"op_poly_{name}")
    assert not [i for i in insts if i.base in ("MUFU", "CALL", "LDL", "STL")], name
    assert len([i for i in insts if i.base in ("FFMA", "FADD", "FMUL")]) >= 5


# the bound (ulp) the header states for each wrapper, over x >= the range's start, as its
# comment writes it; measured on an H200 with math_ulp.cu (its output: math_ulp.expected.txt)
STATED = {"exp2_poly": ("all x", "2.73"),
          "exp": ("all x", "2.54"), "log": ("all x", "0.87"), "log2": ("all x", "0.92"),
          "sqrt": ("all x", "0.5"), "rsqrt": ("all x", "1.52"), "tanh": ("all x", "1.82"),
          "erf": ("all x", "1.04"), "sigmoid": ("all x", "4.75"), "silu": ("x>=-80", "4.73"),
          "gelu": ("x>=-4", "19.4"), "gelu_tanh": ("x>=-4", "19.4")}
RECORDED = Path(__file__).parent / "math_ulp.expected.txt"


def check_bounds(output: str) -> None:
    lines = [l for l in output.splitlines() if l.strip() and not l.startswith("#")]
    ranges = re.findall(r"x>=-\d+|all x", lines[0])
    rows = {l.split()[0]: l.split()[1:] for l in lines[1:]}
    for name, (where, bound) in STATED.items():
        got = float(rows[name][ranges.index(where)])
        assert got <= float(bound), f"argus::{name}: {got} ulp over {where}, stated {bound}"
        assert rows[name][-1] == "0", f"argus::{name}: wrong NaN/inf for {rows[name][-1]} inputs"


def test_the_recorded_measurement_is_within_the_stated_bounds():
    check_bounds(RECORDED.read_text())


def test_the_stated_bounds_are_the_headers():
    """Each bound above is written in the wrapper's comment in argus_math.cuh."""
    text = (ARGUS_HEADER_DIR / "argus_math.cuh").read_text()
    for name, (_, bound) in STATED.items():
        doc = re.search(r"((?:^///[^\n]*\n)+)__device__ __forceinline__ float " + name + r"\(",
                        text, re.M)
        assert doc and re.search(rf"(?<![\d.]){re.escape(bound)}(?![\d.])", doc.group(1)), \
            (name, bound)


def _sm90_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


@pytest.mark.skipif(not (_sm90_gpu() and find_tool("nvcc")), reason="needs an sm_90 GPU and nvcc")
def test_measured_errors_are_within_the_stated_bounds(tmp_path):
    exe = tmp_path / "math_ulp"
    subprocess.run([find_tool("nvcc"), "-O3", "-arch=sm_90a", f"-I{ARGUS_HEADER_DIR}", "-o",
                    str(exe), str(ULP_PROGRAM)], check=True)
    check_bounds(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)
