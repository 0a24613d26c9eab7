"""check_kernel_binary: each problem CI must catch is caught, and a clean kernel passes."""

import pytest

from argus.runtime import check_kernel_binary
from argus.runtime.cache import CacheEntry
from argus.runtime.resources import parse_ptxas_report
from runtime_kernels import KERNELS, requires_disassembler

INTENDED = ["HGMMA", "UTMALDG", "UTMASTG", "SYNCS", "LDSM", "STSM"]
ROLES = {"producer": 40, "consumer": 232}


@requires_disassembler
def test_clean_kernel_passes(every_wrapper_nvcc):
    expect = {"max_registers": 168, "role_registers": ROLES, "max_shared_bytes": 16400,
              "max_stack_bytes": 0, "instructions": INTENDED}
    assert check_kernel_binary(every_wrapper_nvcc, expect) == []


@requires_disassembler
def test_nvrtc_build_passes_the_same_checks(every_wrapper_nvrtc):
    expect = {"max_registers": 168, "role_registers": ROLES, "instructions": INTENDED}
    assert check_kernel_binary(every_wrapper_nvrtc, expect) == []


@requires_disassembler
def test_over_budget_registers_and_smem(every_wrapper_nvcc):
    problems = check_kernel_binary(every_wrapper_nvcc, {"max_registers": 128, "max_shared_bytes": 8192})
    assert len(problems) == 2
    assert "168 registers per thread, over the budget of 128" in problems[0]
    assert "16400 bytes of static shared memory, over the planned 8192" in problems[1]


@requires_disassembler
def test_role_register_count_not_requested(every_wrapper_nvcc):
    problems = check_kernel_binary(every_wrapper_nvcc, {"role_registers": {"producer": 40, "consumer": 240}})
    assert problems == ["every_wrapper: role 'consumer' should run with 240 registers, but no setmaxnreg "
                        "in the SASS requests it (found [40, 232])"]


@requires_disassembler
def test_missing_intended_instruction(spilling_nvcc):
    problems = check_kernel_binary(spilling_nvcc, {"kernel": "local_array", "allow_spills": True,
                                                   "instructions": ["HGMMA", "UTMALDG"]})
    assert problems == ["local_array: intended instruction HGMMA is missing from the SASS",
                        "local_array: intended instruction UTMALDG is missing from the SASS"]


@requires_disassembler
def test_spills_are_problems(spilling_nvcc):
    problems = check_kernel_binary(spilling_nvcc)
    assert any(p.startswith("register_pressure: spills (") for p in problems)
    assert any(p.startswith("local_array: the SASS touches local memory") for p in problems)
    assert check_kernel_binary(spilling_nvcc, {"allow_spills": True}) == []


@requires_disassembler
def test_serialized_wgmma_is_a_problem(serialized_wgmma_nvcc):
    problems = check_kernel_binary(serialized_wgmma_nvcc, {"allow_spills": True})
    assert len(problems) == 1 and "serialized the wgmma pipeline" in problems[0] and "C7510" in problems[0]


@requires_disassembler
def test_ignored_setmaxnreg_is_a_problem(uncapped_setmaxnreg_nvcc):
    problems = check_kernel_binary(uncapped_setmaxnreg_nvcc, {"role_registers": ROLES})
    assert any("ptxas ignored setmaxnreg" in p and "C7508" in p for p in problems)


def test_unknown_expectation_is_refused(every_wrapper_nvcc):
    with pytest.raises(ValueError, match="unknown expectation.*max_regs.*valid ones: kernel"):
        check_kernel_binary(every_wrapper_nvcc, {"max_regs": 128})


def test_unknown_kernel_is_named(every_wrapper_nvcc):
    assert check_kernel_binary(every_wrapper_nvcc, {"kernel": "gemm", "allow_spills": True}) == [
        "kernel 'gemm' is not in the ptxas report (it has ['every_wrapper'])"]


def test_captured_log_problems_need_no_compiler(tmp_path):
    """The older every_wrapper (no accumulator fences, bounded waits) as NVRTC reported it."""
    report = parse_ptxas_report((KERNELS / "every_wrapper_debug.nvrtc.log").read_text())
    entry = CacheEntry("0" * 64, b"", {"resources": report.to_json()}, tmp_path / "entry")
    problems = check_kernel_binary(entry, {"allow_spills": True})
    assert len(problems) == 3
    assert "serialized the wgmma pipeline" in problems[0]
    assert all("inject a warpgroup wait or arrive" in p for p in problems[1:])
    assert check_kernel_binary(entry, {"allow_spills": True, "allow_wgmma_serialized": True,
                                       "allow_injected_wgmma_waits": True}) == []
