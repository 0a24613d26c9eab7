"""The ptxas -v report parser, on real ptxas output (captured logs and this session's builds)."""

from argus.runtime.resources import ResourceReport, parse_ptxas_report
from runtime_kernels import KERNELS


def test_nvrtc_log_with_serialized_wgmma():
    report = parse_ptxas_report((KERNELS / "every_wrapper_debug.nvrtc.log").read_text())
    k = report.kernels["every_wrapper"]
    assert (k.registers, k.barriers, k.shared_bytes) == (168, 3, 16400)
    assert (k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes) == (32, 0, 0)
    assert k.cumulative_stack_bytes == 32 and not k.spills
    assert [d.code for d in report.diagnostics] == ["C7519", "C7517", "C7510"]
    serialized = [d for d in report.diagnostics if d.wgmma_serialized]
    assert len(serialized) == 1 and serialized[0].function == "every_wrapper"


def test_nvcc_log_with_two_entries_and_spills():
    report = parse_ptxas_report((KERNELS / "spills.nvcc.log").read_text())
    assert set(report.kernels) == {"register_pressure", "local_array"}
    pressure, local = report.kernels["register_pressure"], report.kernels["local_array"]
    assert (pressure.registers, pressure.spill_store_bytes, pressure.spill_load_bytes) == (32, 400, 552)
    assert pressure.spills and pressure.stack_frame_bytes == 376
    assert local.stack_frame_bytes == 256 and not local.spills  # a local array is stack, not spill


def test_report_survives_the_json_round_trip():
    report = parse_ptxas_report((KERNELS / "every_wrapper_debug.nvrtc.log").read_text())
    again = ResourceReport.from_json(report.to_json())
    assert again == report


def test_empty_log_has_no_kernels():
    assert parse_ptxas_report("").kernels == {}


def test_this_sessions_nvcc_report_matches_the_kernel(every_wrapper_nvcc):
    k = every_wrapper_nvcc.resources.kernels["every_wrapper"]
    # __launch_bounds__(384, 1): 65536 registers / 384 threads, rounded down to a multiple of 8.
    assert k.registers <= (65536 // 384) // 8 * 8
    # the 16 KiB tile plus two 8-byte barriers; bar ids 0 (__syncthreads), 1 and 2, and a
    # bar.sync whose id is a register (argus::warpgroup_sync), so ptxas reserves all 16
    assert (k.shared_bytes, k.barriers) == (64 * 64 * 2 * 2 + 16, 16)


def test_this_sessions_spills_are_reported(spilling_nvcc):
    kernels = spilling_nvcc.resources.kernels
    assert kernels["register_pressure"].spills and kernels["register_pressure"].registers <= 32
    assert kernels["local_array"].stack_frame_bytes >= 64 * 4


def test_setmaxnreg_ignored_is_recognised(uncapped_setmaxnreg_nvcc):
    diags = uncapped_setmaxnreg_nvcc.resources.diagnostics
    assert any(d.setmaxnreg_ignored and d.code == "C7508" for d in diags)
