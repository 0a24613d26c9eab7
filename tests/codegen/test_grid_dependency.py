"""Every generated kernel's first statements wait for the grids it depends on and then let
its own dependents be scheduled (argus_grid_dependency.cuh), so a launch with programmatic
stream serialization (ARGUS_PDL=1) never touches memory before its predecessor is done."""

import pytest

from argus.codegen import generate
from argus.ops.library import kernel_ir


@pytest.mark.parametrize("module, name, overrides", [
    ("gemm", "gemm_nn", {}),
    ("moe_route", "moe_topk", {"E": 64, "TOPK": 6, "BT": 4}),
    ("moe_route", "moe_place", {"E": 64, "TOPK": 6, "BS": 128}),
    ("moe_gate_up", "moe_gate_up", {"E": 64, "WG": 1, "CONSUMERS": (1,)}),
    ("moe_combine", "moe_combine", {}),
])
def test_the_kernel_waits_for_its_predecessor_before_anything_else(module, name, overrides):
    src = generate(kernel_ir(module, name, **overrides)).source
    body = src[src.index(") {", src.index('extern "C" __global__')) + 3:].strip().splitlines()
    assert body[0].strip() == "argus::grid_dependency_wait();"
    assert body[1].strip() == "argus::launch_dependents();"
    assert src.count("griddepcontrol") == 0 and '#include "argus_grid_dependency.cuh"' in src
