"""A kernel-mode candidate on the GPU, inside candidate_child.py's process.

The candidate file is parsed by the DSL frontend (never imported), generated and built as
`argus run` builds a kernel (codegen, NVRTC or nvcc), and launched by the runtime on torch
tensors: on each input set, its outputs arriving poisoned from the task (NaN, or the least
int32), every output copied back for the parent to compare with the reference. Then the
first set is timed: device events around each launch after a warm-up, the L2 flushed
before each timed launch (argus.bench.timing, the harness's own clock), median and
p10/p90 of the launches.

`job["profile"]`: launch twice on the first set and time nothing (the run Nsight Compute
watches, candidate_run.profile_child: its second launch is the one measured).
"""
from __future__ import annotations

import statistics

import numpy as np

TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "int32": "int32"}
WARMUP = 5
REPS = 50


def run_kernel_on_gpu(job: dict, arrays: dict[str, np.ndarray], kernel, failed) -> tuple:
    """(reply, outputs) of a kernel-mode job on the GPU. `kernel` is the parsed IR (the
    job's constants applied); `failed(kind, message)` builds the exception to raise."""
    try:
        import torch
    except ImportError:
        raise failed("device", "the GPU evaluator needs torch in the candidate's "
                               "environment") from None
    if not torch.cuda.is_available():
        raise failed("device", "no CUDA device is visible to the candidate's process")
    from argus.codegen import CodegenError, generate
    from argus.runtime import BuildError, BuildOptions, build_kernel
    from argus.runtime.launch import Launcher
    from argus.runtime.launch_errors import DriverError, LaunchError

    try:
        gen = generate(kernel)
        entry = build_kernel(gen.source, BuildOptions())
    except CodegenError as err:
        raise failed("build", f"the kernel does not generate: {err}") from None
    except BuildError as err:
        raise failed("build", f"the generated CUDA did not compile: {str(err)[:3000]}") from None
    launch = Launcher(gen, entry.cubin, kernel)
    params = {p.name: p for p in kernel.params if hasattr(p.type, "shape")}
    names = job["tensors"]
    unknown = [n for n in names if n not in params]
    if unknown:
        raise failed("launch", f"the candidate's kernel {job['kernel']} has no tensor "
                               f"parameter {', '.join(unknown)}")
    outputs: dict[str, np.ndarray] = {}
    first = None
    for i in range(job["sets"]):
        tensors = [_device_tensor(torch, arrays[f"set{i}.{n}"], params[n], failed)
                   for n in names]
        try:
            launch(*tensors)
            torch.cuda.synchronize()
        except (LaunchError, DriverError, RuntimeError) as err:
            raise failed("launch", f"kernel {job['kernel']} on input set {i}: {err}") from None
        by_name = dict(zip(names, tensors))
        for n in job["outputs"]:
            t = by_name[n]
            outputs[f"out{i}.{n}"] = (t.cpu().numpy() if t.dtype == torch.int32
                                      else t.float().cpu().numpy())
        if first is None:
            first = tensors
    if job.get("profile"):
        launch(*first)
        torch.cuda.synchronize()
        return {"ok": True, "profiled": True}, outputs
    return {"ok": True, "gpu": time_launches(torch, lambda: launch(*first),
                                             job.get("reps", REPS))}, outputs


def _device_tensor(torch, array: np.ndarray, param, failed):
    dtype = str(param.type.dtype)
    if dtype not in TORCH_DTYPES:
        raise failed("launch", f"tensor {param.name}: dtype {dtype} has no GPU path here")
    host = np.ascontiguousarray(array, np.int32 if dtype == "int32" else np.float32)
    return torch.from_numpy(host).to(getattr(torch, TORCH_DTYPES[dtype])).cuda()


def time_launches(torch, fn, reps: int) -> dict:
    """Milliseconds per launch: median, p10, p90 of `reps` event-timed launches after a
    warm-up, the L2 flushed before each (outside the timed region)."""
    from argus.bench.timing import EventClock, L2Flusher, time_calls

    clock = EventClock()
    times = sorted(time_calls(fn, clock, reps=reps, warmup=WARMUP, before_each=L2Flusher()))
    return {"time_ms": statistics.median(times), "p10_ms": times[len(times) // 10],
            "p90_ms": times[(9 * len(times)) // 10], "reps": reps,
            "device": torch.cuda.get_device_name(), "timing": "events, L2 flushed"}
