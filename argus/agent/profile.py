"""The `profile` tool: where a GEMM candidate's time goes, with whatever this machine has.

- ncu and a GPU: Nsight Compute in a child process, `ncu --csv --metrics M,...
  --clock-control none python -m argus.agent.profile_target ...` (the candidate runs in
  ncu's child, never here; clocks are left as the harness sees them instead of locked to
  base, which also needs no clock privileges); the CSV
  is parsed into {kernel: {metric: {"value", "unit"}}} and a few derived profile signals
  (the knowledge base's `signals`, e.g. memory-bound) that `argus kb search --signal` takes.
- a GPU without ncu: a timing breakdown from the same target in a child (build, first
  launch, median and min of CUDA-event timed launches, torch.matmul in the same process).
- no GPU: {"ok": false, "available": false, "kind": "unavailable", "reason": "unavailable:
  no GPU ..."}.

The candidate is a library configuration (knobs, as `argus.ops.matmul` takes them) or a
model-written DSL kernel file. `runner` (tests) replaces the child process call.
"""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from argus.agent.evaluators import gpu as gpu_eval
from argus.agent.kernel_source import kernel_names

DEFAULT_METRICS = (
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "launch__registers_per_thread",
)
TIMEOUT_S = 600.0
Runner = Callable[[list[str], float], tuple[int, str, str]]


def _run(cmd: list[str], timeout_s: float) -> tuple[int, str, str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 124, "", f"{cmd[0]} did not finish within {timeout_s:g} s"
    return proc.returncode, proc.stdout, proc.stderr


def _number(text: str):
    cleaned = text.replace(",", "").strip()
    try:
        return float(cleaned)
    except ValueError:
        return cleaned or None


def parse_ncu_csv(text: str) -> dict[str, dict[str, dict[str, Any]]]:
    """ncu --csv output (one row per kernel launch and metric) -> {kernel: {metric: {value,
    unit}}}; the last launch of a kernel wins (earlier ones are warm-up). ==PROF== and other
    non-CSV lines are skipped."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no ncu CSV table (a header starting with \"ID\") in the output")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name, metric = row.get("Kernel Name"), row.get("Metric Name")
        if not name or not metric:
            continue
        out.setdefault(name, {})[metric] = {"value": _number(row.get("Metric Value", "")),
                                            "unit": row.get("Metric Unit", "")}
    return out


def derive_signals(metrics: dict[str, dict[str, Any]]) -> list[str]:
    """Knowledge-base profile signals from one kernel's metrics (coarse thresholds)."""
    def pct(name):
        v = metrics.get(name, {}).get("value")
        return v if isinstance(v, float) else None

    sm, dram = pct(DEFAULT_METRICS[1]), pct(DEFAULT_METRICS[2])
    tensor, warps = pct(DEFAULT_METRICS[3]), pct(DEFAULT_METRICS[4])
    conflicts = pct(DEFAULT_METRICS[5])
    signals = []
    if dram is not None and dram >= 70 and (sm is None or sm < dram):
        signals.append("memory-bound")
    if tensor is not None and tensor < 50:
        signals.append("low-tensor-utilisation")
    if sm is not None and dram is not None and sm < 50 and dram < 50:
        signals.append("latency-bound")
    if warps is not None and warps < 20:
        signals.append("low-occupancy")
    if sm is not None and tensor is not None and sm >= 80 and tensor >= 70:
        signals.append("compute-bound")
    if conflicts is not None and conflicts > 0:
        signals.append("smem-bank-conflicts")
    return signals


def _target_args(shape: str, config: dict | None, kernel: str) -> list[str]:
    args = [sys.executable, "-m", "argus.agent.profile_target", "--shape", shape]
    if kernel:
        args += ["--kernel", kernel]
    else:
        args += ["--config", json.dumps(config or {})]
    return args


def _kernel_filter(kernel: str) -> str:
    if not kernel:
        return "regex:^gemm"
    with open(kernel, encoding="utf-8") as handle:
        names = kernel_names(handle.read())
    return "regex:^(" + "|".join(names or ["gemm"]) + ")"


def profile(shape: str, config: dict | None = None, kernel: str = "",
            metrics: list[str] | None = None, runner: Runner | None = None,
            gpu: bool | None = None, ncu: str | None = "") -> dict[str, Any]:
    """Profile one candidate; see the module docstring for the three kinds of result."""
    from argus.runtime.toolchain import find_tool

    base = {"tool": "profile", "shape": shape, "config": config or {}, "kernel": kernel}
    gpu = gpu_eval.cuda_available() if gpu is None else gpu
    if not gpu:
        return {**base, "ok": False, "available": False, "kind": "unavailable",
                "reason": "unavailable: no GPU (torch.cuda is not available here); the "
                          "cost_model tool predicts resources and speed without one"}
    run = runner or _run
    ncu = find_tool("ncu") if ncu == "" else ncu
    if ncu:
        wanted = list(metrics or DEFAULT_METRICS)
        cmd = [ncu, "--csv", "--metrics", ",".join(wanted), "--clock-control", "none",
               "--kernel-name",
               _kernel_filter(kernel), "--launch-skip", "1", "--launch-count", "1",
               *_target_args(shape, config, kernel), "--launches", "2"]
        code, out, err = run(cmd, TIMEOUT_S)
        if code != 0:
            return {**base, "ok": False, "available": True, "kind": "ncu",
                    "error": f"ncu exited {code}: {err.strip()[-1500:] or out.strip()[-1500:]}"}
        try:
            table = parse_ncu_csv(out)
        except ValueError as why:
            return {**base, "ok": False, "available": True, "kind": "ncu", "error": str(why)}
        return {**base, "ok": bool(table), "available": True, "kind": "ncu",
                "metrics": table,
                "signals": {name: derive_signals(m) for name, m in table.items()}}
    code, out, err = run(_target_args(shape, config, kernel) + ["--timing"], TIMEOUT_S)
    try:
        timing = json.loads(out.strip().splitlines()[-1]) if code == 0 else None
    except (json.JSONDecodeError, IndexError):
        timing = None
    if timing is None:
        return {**base, "ok": False, "available": True, "kind": "timing",
                "error": f"the timing child exited {code}: {err.strip()[-1500:]}"}
    return {**base, "ok": True, "available": True, "kind": "timing", "timing": timing,
            "note": "ncu was not found; a timing breakdown instead"}
