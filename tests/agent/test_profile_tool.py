"""The profile tool: typed "unavailable" without a GPU; ncu CSV parsed (stubbed runner);
a timing breakdown without ncu; the candidate always runs in a child command."""
import json

from argus.agent import tools
from argus.agent.profile import DEFAULT_METRICS, derive_signals, parse_ncu_csv, profile

NCU_CSV = '''==PROF== Connected to process 4242 (/usr/bin/python3.11)
==PROF== Profiling "gemm_nn" - 0: 0%....50%....100% - 9 passes
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.11","127.0.0.1","gemm_nn","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","dram__throughput.avg.pct_of_peak_sustained_elapsed","%","21.37"
"0","4242","python3.11","127.0.0.1","gemm_nn","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","1,412.64"
"0","4242","python3.11","127.0.0.1","gemm_nn","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","launch__registers_per_thread","register/thread","168"
"0","4242","python3.11","127.0.0.1","gemm_nn","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active","%","38.5"
"0","4242","python3.11","127.0.0.1","gemm_nn","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","sm__throughput.avg.pct_of_peak_sustained_elapsed","%","40.02"
"0","4242","python3.11","127.0.0.1","gemm_nn","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum","","n/a"
'''


def test_without_a_gpu_the_result_is_typed_unavailable():
    out = tools.profile("4096x4096x4096")          # this machine has no CUDA GPU
    assert out["tool"] == "profile" and out["ok"] is False
    assert out["available"] is False and out["kind"] == "unavailable"
    assert out["reason"].startswith("unavailable: no GPU")


def test_bad_input_is_an_error_not_a_profile():
    bad = tools.profile("4096x4096")
    assert bad["ok"] is False and "is not MxNxK" in bad["error"]
    assert "BM=96" in tools.profile("64x64x64", {"BM": 96})["error"]
    assert "does not exist" in tools.profile("64x64x64", kernel="/no/such.py")["error"]


def test_ncu_csv_is_parsed_with_units_and_thousands_separators():
    table = parse_ncu_csv(NCU_CSV)
    assert list(table) == ["gemm_nn"]
    m = table["gemm_nn"]
    assert m["gpu__time_duration.sum"] == {"value": 1412.64, "unit": "usecond"}
    assert m["launch__registers_per_thread"]["value"] == 168.0
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"]["value"] == "n/a"
    assert derive_signals(m) == ["low-tensor-utilisation", "latency-bound"]


def test_ncu_path_runs_the_candidate_under_ncu_in_a_child():
    calls = []

    def runner(cmd, timeout):
        calls.append(cmd)
        return 0, NCU_CSV, ""

    out = profile("4096x4096x4096", {"BN": 128}, runner=runner, gpu=True, ncu="/opt/ncu")
    assert out["ok"] and out["kind"] == "ncu" and out["available"]
    assert out["metrics"]["gemm_nn"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"][
        "value"] == 40.02
    assert out["signals"]["gemm_nn"] == ["low-tensor-utilisation", "latency-bound"]
    cmd = calls[0]
    assert cmd[:3] == ["/opt/ncu", "--csv", "--metrics"] and cmd[3] == ",".join(DEFAULT_METRICS)
    target = cmd.index("argus.agent.profile_target")
    assert cmd[target - 1] == "-m" and json.loads(cmd[cmd.index("--config") + 1]) == {"BN": 128}


def test_ncu_failure_and_garbage_are_reported():
    out = profile("64x64x64", runner=lambda c, t: (1, "", "==ERROR== ERR_NVGPUCTRPERM"),
                  gpu=True, ncu="/opt/ncu")
    assert not out["ok"] and "ERR_NVGPUCTRPERM" in out["error"]
    out = profile("64x64x64", runner=lambda c, t: (0, "no table here", ""), gpu=True,
                  ncu="/opt/ncu")
    assert not out["ok"] and "no ncu CSV table" in out["error"]


def test_without_ncu_a_timing_breakdown_from_a_child(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text("@kernel()\ndef my_gemm(A, B, C):\n    pass\n")
    calls = []
    line = json.dumps({"median_ms": 1.5, "min_ms": 1.4, "peer_median_ms": 1.2})

    def runner(cmd, timeout):
        calls.append(cmd)
        return 0, "building...\n" + line + "\n", ""

    out = profile("4096x4096x4096", kernel=str(kernel), runner=runner, gpu=True, ncu=None)
    assert out["ok"] and out["kind"] == "timing" and out["timing"]["median_ms"] == 1.5
    assert calls[0][-1] == "--timing" and calls[0][calls[0].index("--kernel") + 1] == str(kernel)
    # under ncu the kernel filter names the file's own kernel
    profile("4096x4096x4096", kernel=str(kernel), runner=lambda c, t: calls.append(c) or (
        0, NCU_CSV, ""), gpu=True, ncu="/opt/ncu")
    assert "regex:^(my_gemm)" in calls[1]


def test_derived_signals_are_knowledge_base_signals():
    from argus.agent.knowledge import load_knowledge

    known = {s for t in load_knowledge() for s in t.signals}

    def metrics(sm, dram, tensor, warps, conflicts):
        values = (None, sm, dram, tensor, warps, conflicts)
        return {m: {"value": v, "unit": "%"} for m, v in zip(DEFAULT_METRICS, values)}

    seen = set(derive_signals(metrics(30.0, 90.0, 20.0, 10.0, 5.0)))
    seen |= set(derive_signals(metrics(40.0, 30.0, 30.0, 50.0, 0.0)))
    seen |= set(derive_signals(metrics(90.0, 30.0, 85.0, 50.0, 0.0)))
    assert seen == {"memory-bound", "low-tensor-utilisation", "low-occupancy",
                    "smem-bank-conflicts", "latency-bound", "compute-bound"}
    assert seen <= known


def test_ncu_leaves_the_clocks_alone():
    """ncu locks clocks to base by default; the harness times at the GPU's own clocks."""
    from argus.agent.profile import profile

    calls = []

    def runner(cmd, timeout):
        calls.append(cmd)
        return 1, "", "stub"

    profile("256x256x256", {"BN": 128}, runner=runner, gpu=True, ncu="/opt/ncu")
    cmd = calls[0]
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd.index("--clock-control") < cmd.index("-m")     # an ncu option, not the target's
