"""H200: where argus.ops.matmul's host time per call goes (issue 18 item 3), against
torch.matmul on a launch-bound shape (128^3). Each step of the call path is timed alone
over many calls (perf_counter, min of 5 rounds), then the whole call; JSON to argv[1]."""

import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import importlib  # noqa: E402

import argus.ops  # noqa: E402
from argus.ops.registry import plain_eager  # noqa: E402

mm = importlib.import_module("argus.ops.matmul")   # the module (argus.ops.matmul is the function)


def per_call_us(fn, calls=2000, rounds=5):
    best = float("inf")
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def main():
    a = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(128, 128, device="cuda", dtype=torch.bfloat16)
    bt = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16).t()
    argus.ops.matmul(a, b)
    argus.ops.matmul(a, bt)
    m, n, k, layout, b_stored = mm.check_operands(a, b)
    launcher, split = mm._tuned_plan(a, lambda: b_stored, out, layout, "bf16", m, n, k, None)
    kept_key = ("host-probe", a.data_ptr(), b.data_ptr(), out.data_ptr())
    steps = {
        "torch.matmul": lambda: torch.matmul(a, b),
        "torch.matmul out=": lambda: torch.matmul(a, b, out=out),
        "argus.ops.matmul": lambda: argus.ops.matmul(a, b),
        "argus matmul_into out=": lambda: mm.matmul_into(a, b, out, {}),
        "check_operands": lambda: mm.check_operands(a, b),
        "torch.empty": lambda: torch.empty((m, n), dtype=a.dtype, device=a.device),
        "plain_eager": lambda: plain_eager(a, b),
        "_tuned_plan": lambda: mm._tuned_plan(a, lambda: b_stored, out, layout, "bf16", m, n, k,
                                              None),
        "_operands": lambda: mm._operands(a, b),
        "alloc a.new_empty((m, n))": lambda: a.new_empty((m, n)),
        "alloc torch.empty_like(out)": lambda: torch.empty_like(out),
        "alloc torch.empty(m, n, dtype, device)": lambda: torch.empty(m, n, dtype=a.dtype, device=a.device),
        "alloc out.new_empty(out.shape)": lambda: out.new_empty(out.shape),
        "alloc torch.empty_strided": lambda: torch.empty_strided((m, n), (n, 1), dtype=a.dtype, device=a.device),
        "launch_keyed (a kept key)": lambda: launcher.launch_keyed(kept_key, lambda: (a, b_stored, out)),
        "argus matmul_into out= (W.t())": lambda: mm.matmul_into(a, bt, out, {}),
        "torch.matmul (W.t())": lambda: torch.matmul(a, bt),
        "argus.ops.matmul (W.t())": lambda: argus.ops.matmul(a, bt),
        "launcher(a, b, out)": lambda: launcher(a, b_stored, out),
        "torch.cuda.current_stream().cuda_stream": lambda: torch.cuda.current_stream().cuda_stream,
        "torch._C._cuda_getCurrentRawStream(0)": lambda: torch._C._cuda_getCurrentRawStream(0),
        "torch.cuda.current_device()": lambda: torch.cuda.current_device(),
        "launch.make_context_current": lambda: __import__("argus.runtime.launch", fromlist=["x"]).make_context_current(torch),
        "_signature": lambda: __import__("argus.runtime.launch", fromlist=["x"])._signature((a, b_stored, out), None),
    }
    # split-K (the decode path): the op, the workspace's bookkeeping, the rounding launch
    xs = torch.randn(8, 4096, device="cuda", dtype=torch.bfloat16)
    ws_ = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    outs = torch.empty(8, 4096, device="cuda", dtype=torch.bfloat16)
    split_knobs = {"BM": 64, "BN": 128, "split_k": 4}
    mm.matmul_into(xs, ws_, outs, split_knobs)
    from argus.ops.workspace import zeroed_workspace

    def workspace_only():
        with zeroed_workspace(outs):
            pass
    _, rounder = mm.plan("kn", 8, 4096, 4096, "bf16", split_knobs)
    with zeroed_workspace(outs) as w:
        pass
    steps["argus matmul_into split_k=4 (8x4096x4096)"] = \
        lambda: mm.matmul_into(xs, ws_, outs, split_knobs)
    steps["zeroed_workspace enter+exit"] = workspace_only
    steps["rounder(w, out)"] = lambda: rounder(w, outs)
    steps["is_current_stream_capturing (C)"] = lambda: torch._C._cuda_isCurrentStreamCapturing()
    steps["environment.values(PLAN_ENV)"] = lambda: mm.environment.values(mm.PLAN_ENV)
    prepared = next(iter(launcher._prepared.values()))
    if launcher._driver is not None:
        entry = next(iter(launcher._driver_configs.values()))
        steps["cuLaunchKernelEx alone (ctypes)"] = \
            lambda: launcher._driver.launch(entry[0], prepared.address)
    stream = torch.cuda.current_stream().cuda_stream
    config = launcher._config(prepared.grid, stream)
    fn = launcher._function
    steps["cuLaunchKernelEx alone (cuda-python)"] = \
        lambda: launcher._launch(config, fn, prepared.address, 0)
    result = {}
    for name, f in steps.items():
        try:
            result[name] = per_call_us(f)
        except Exception as err:     # one step failing leaves the others measured
            result[name] = f"{type(err).__name__}: {err}"[:200]
    for name, us in result.items():
        print(f"{us:8.2f} us  {name}" if isinstance(us, float) else f"  failed  {name}: {us}",
              flush=True)
    Path(sys.argv[1]).write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                             "per_call_us": result}, indent=1))


if __name__ == "__main__":
    main()
