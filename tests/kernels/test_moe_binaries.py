"""The MoE kernels' binaries (sm_90a, as argus.ops.moe specialises them for the issue's
shapes: 8 and 128 experts, prefill and decode tiles, top-8) compile without register spills
and within shared memory. Slow: each GEMM build takes ~15 s of CPU, the 128-expert top-k
one ~10 minutes on a loaded 2-core machine; CI builds one sample (the decode gate-up), the
whole list runs with `python -m pytest -m "slow or not slow"` (scripts/test_all.sh). CI also
builds the gate-up with the warpgroup gather (GATHER="warpgroup", no spill)."""

import pytest

from argus.codegen import generate
from argus.ops.library import kernel_ir
from argus.runtime import BuildOptions, build_kernel
from argus.runtime.toolchain import find_tool, nvrtc_identity

pytestmark = [pytest.mark.skipif(
    find_tool("nvcc") is None and nvrtc_identity() is None, reason="needs a CUDA compiler")]
SAMPLE = ("moe_down", "moe_down", {"E": 8, "BN": 64, "S": 8})      # built in CI
# The gate-up's one-thread producer spills ~300-600 B with the row gather's 16-index batch
# (argus/codegen/lower/indexed.py GATHER_BATCH): kept because it measured fastest on the H200
# (Mixtral T=512 gate-up 3.74 ms vs 5.47 one index a box, 7.25 the next-row prefetch;
# docs/perf-log.md); a batch of 4 does not spill and is unmeasured. With 128 experts the
# counts are read from memory, not kept in registers, and the producer does not spill. A strict xfail, so the
# day the gather stops spilling this file says so.
GATHER_SPILLS = pytest.mark.xfail(strict=True, reason="gate-up producer spills with the "
                                  "16-index gather batch (measured fastest; docs/perf-log.md)")

# The warpgroup gather (GATHER="warpgroup", gather_cp_async): every producer thread keeps only
# its row index and its chunks' addresses, so the 40-register producer does not spill; its
# SASS is LDGSTS.128 and one ARRIVES.LDGSTSBAR a k-step, no local memory.
WARPGROUP = ("moe_gate_up", "moe_gate_up", {"E": 8, "BN": 128, "S": 4, "GATHER": "warpgroup"})
SPECS = [WARPGROUP,
         ("moe_gate_up", "moe_gate_up", {"E": 64, "BN": 128, "S": 4, "GATHER": "warpgroup"}),
         ("moe_gate_up", "moe_gate_up", {"E": 8, "BN": 64, "S": 6, "GATHER": "warpgroup"}),
         ("moe_gate_up", "moe_gate_up", {"E": 128, "BN": 128, "S": 4}),
         ("moe_gate_up", "moe_gate_up", {"E": 8, "BN": 64, "S": 6}),
         ("moe_down", "moe_down", {"E": 128, "BN": 128, "S": 6}),
         ("moe_down", "moe_down", {"E": 8, "BN": 64, "S": 8}),
         ("moe_route", "moe_topk", {"E": 128, "TOPK": 8}),
         ("moe_route", "moe_count", {"E": 128, "TOPK": 8}),
         ("moe_route", "moe_place", {"E": 128, "TOPK": 8}),
         ("moe_route", "moe_place", {"E": 64, "TOPK": 6, "BS": 128, "COUNT_HERE": 1}),
         ("moe_combine", "moe_combine", {"TOPK": 8}),
         ("moe_combine", "moe_combine_atomic", {"TOPK": 8})]


@pytest.mark.parametrize("module, name, overrides", [
    pytest.param(*spec, marks=(() if spec in (SAMPLE, WARPGROUP) else (pytest.mark.slow,))
                 + ((GATHER_SPILLS,) if spec[1] == "moe_gate_up" and spec[2]["E"] <= 8
                    and spec[2].get("GATHER", "tma") == "tma" else ()),
                 id=f"{spec[1]}-{'-'.join(f'{k}{v}' for k, v in spec[2].items())}")
    for spec in SPECS])
def test_binary_has_no_spills(module, name, overrides, tmp_path):
    from argus.runtime import KernelCache

    gen = generate(kernel_ir(module, name, **overrides))
    assert gen.smem_bytes <= 227 * 1024
    entry = build_kernel(gen.source, BuildOptions(), KernelCache(tmp_path))
    k = entry.resources.kernels[name]
    assert k.spill_store_bytes == 0 and k.spill_load_bytes == 0, k
    if overrides.get("GATHER") == "warpgroup" and overrides["E"] <= 8:
        ops = {i.opcode for i in entry.sass().instructions(name)}
        assert {"LDGSTS.E.BYPASS.128", "ARRIVES.LDGSTSBAR.64.ARVCNT"} <= ops, sorted(ops)
        assert not any(o.startswith(("LDL", "STL")) for o in ops), sorted(ops)
