"""A candidate on the GPU, inside candidate_child.py's process: a kernel (kernel mode) or a
KernelBench ModelNew (model mode).

The candidate file is parsed by the DSL frontend (never imported), generated and built as
`argus run` builds a kernel (codegen, NVRTC or nvcc), and launched by the runtime on torch
tensors: on each input set, its outputs arriving poisoned from the task (NaN, or the least
int32), every output copied back for the parent to compare with the reference. Then the
first set is timed: device events around each launch after a warm-up, the L2 flushed
before each timed launch (argus.bench.timing, the harness's own clock), median and
p10/p90 of the launches.

`job["profile"]`: launch twice on the first set and time nothing (the run Nsight Compute
watches, candidate_run.profile_child: its second launch is the one measured).

A ModelNew (run_model_on_gpu) is evaluated from its syntax tree as on the interpreter
(glue.py), over torch tensors on the device (TorchSpace): the Model's inputs and parameters
arrive as float32 (int32), its allocations are poisoned, and each kernel it calls is built
for the constants of the call and launched by the runtime on the current stream. A tensor
whose dtype differs from the kernel parameter's (float32 glue tensors into a bf16 GEMM) is
converted for the launch and copied back after it, as the interpreter rounds to the declared
dtype; those conversions are the harness's and are timed with the forward. The first set's
forward is then timed as a CUDA graph of the whole forward (the harness's evaluation of the
glue, which is slower than Python's, kept out), L2 flushed before each replay; where the
forward cannot be captured, events around the forward, glue evaluation included, and the
timing says which.
"""
from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np

TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "int32": "int32"}
WARMUP = 5
REPS = 50


def _torch_on_a_gpu(failed):
    """torch, where it sees a CUDA device; else the candidate's "device" failure."""
    try:
        import torch
    except ImportError:
        raise failed("device", "the GPU evaluator needs torch in the candidate's "
                               "environment") from None
    if not torch.cuda.is_available():
        raise failed("device", "no CUDA device is visible to the candidate's process")
    return torch


def run_kernel_on_gpu(job: dict, arrays: dict[str, np.ndarray], kernel, failed) -> tuple:
    """(reply, outputs) of a kernel-mode job on the GPU. `kernel` is the parsed IR (the
    job's constants applied); `failed(kind, message)` builds the exception to raise."""
    torch = _torch_on_a_gpu(failed)
    from argus.runtime.launch_errors import DriverError, LaunchError

    launch = _runtime_launcher(kernel, failed, job["kernel"])
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


class GlueLaunches:
    """What ModelNew's kernel calls do on the GPU: `(name, args, keywords, grid, line)` as
    the glue evaluator calls a launcher. `parse(name, constants)` gives the kernel's IR;
    `make_launcher(ir)` its runtime launcher (built on first use, kept per constants and
    grid)."""

    def __init__(self, torch, parse, failed, make_launcher=None):
        self.torch, self.parse, self.failed = torch, parse, failed
        self.make_launcher = make_launcher or _runtime_launcher
        self.launchers: dict[tuple, object] = {}
        self.count = 0
        self.conversions = 0

    def __call__(self, name: str, args: list, keywords: dict, grid=None, line=None) -> None:
        from argus.agent.tasks.kernel_calls import kernel_arguments
        from argus.runtime.interpreted import _with_grid

        torch = self.torch
        where = f" (line {line})" if line else ""
        grid = None if grid is None else ((grid,) if isinstance(grid, int) else tuple(grid))
        key = (name, tuple(sorted(keywords.items())), grid)
        probe = self.parse(name, dict(keywords))
        tensors, params = kernel_arguments(probe, name, args, where,
                                           lambda a: isinstance(a, torch.Tensor), self.failed)
        launcher = self.launchers.get(key)
        if launcher is None:
            ir = probe if grid is None else _with_grid(probe, grid)
            launcher = self.launchers[key] = self.make_launcher(ir, self.failed, name + where)
        given, back = [], []
        for p, t in zip(params, tensors):
            want = getattr(torch, TORCH_DTYPES.get(str(p.type.dtype), "float32"))
            if t.dtype != want and t.is_floating_point():
                c = t.to(want).contiguous()
                given.append(c)
                back.append((t, c))
            else:
                given.append(t)
        self.conversions += len(back)
        try:
            launcher(*given)
        except Exception as err:      # LaunchError, DriverError, a torch RuntimeError
            raise self.failed("launch", f"kernel {name}{where}: {err}") from None
        for t, c in back:
            t.copy_(c)
        self.count += 1


def _runtime_launcher(ir, failed, label: str):
    """The GPU build's launcher of `ir`, build failures as the candidate's."""
    from argus.codegen import CodegenError
    from argus.runtime import BuildError
    from argus.runtime.compiled import build_launcher

    try:
        return build_launcher(ir)
    except CodegenError as err:
        raise failed("build", f"kernel {label} does not generate: {err}") from None
    except BuildError as err:
        raise failed("build", f"kernel {label}: the generated CUDA did not compile: "
                              f"{str(err)[:3000]}") from None


def run_model_on_gpu(job: dict, arrays: dict[str, np.ndarray], state: dict[str, np.ndarray],
                     source: str, parse, failed, make_launcher=None,
                     device: str = "cuda") -> tuple:
    """(reply, outputs) of a model-mode job (a KernelBench ModelNew) on the GPU."""
    torch = _torch_on_a_gpu(failed)
    from argus.agent.tasks.glue import GlueError, GlueRunner, TorchSpace, read_glue

    space = TorchSpace(torch, device)
    launches = GlueLaunches(torch, parse, failed, make_launcher)
    try:
        glue = read_glue(Path(job["path"]), source)
        runner = GlueRunner(glue, source, {k: space.from_host(v) for k, v in state.items()},
                            launches, job.get("init_args", []), space)
    except GlueError as err:
        raise failed("glue", str(err)) from None

    def forward(inputs):
        try:
            got = runner.forward(inputs)
        except GlueError as err:
            raise failed("glue", str(err)) from None
        except (ValueError, IndexError, TypeError, RuntimeError) as err:
            raise failed("glue", f"ModelNew.forward: {err}") from None
        return got if isinstance(got, tuple) else (got,)

    outputs: dict[str, np.ndarray] = {}
    first = None
    for i in range(job["sets"]):
        count = sum(1 for k in arrays if k.startswith(f"set{i}."))
        inputs = [space.from_host(arrays[f"set{i}.{j}"]) for j in range(count)]
        got = forward(inputs)
        torch.cuda.synchronize()
        for j, g in enumerate(got):
            if not isinstance(g, torch.Tensor):
                raise failed("glue", f"ModelNew.forward returned {type(g).__name__}, not a "
                                     f"tensor")
            outputs[f"out{i}.{j}"] = space.to_host(g)
        if first is None:
            first = inputs
    if not launches.count:
        raise failed("glue", "the candidate launched no DSL kernel")
    per_forward = (launches.count // max(1, job["sets"]),
                   launches.conversions // max(1, job["sets"]))
    space.poison = False              # the timed forwards: allocations are not kernels
    timing = time_forward(torch, lambda: forward(first), job.get("reps", REPS))
    timing["launches_per_forward"], timing["dtype_conversions"] = per_forward
    return {"ok": True, "gpu": timing}, outputs


def time_forward(torch, fn, reps: int) -> dict:
    """time_launches of a whole forward: replayed as a CUDA graph when it can be captured
    (the device's time for the forward's kernels), else called directly (the harness's
    glue evaluation on the host included); the timing field says which."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()                              # warm-up outside the capture
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        out = time_launches(torch, graph.replay, reps)
        out["timing"] += "; the forward replayed as one CUDA graph (host glue excluded)"
        return out
    except Exception as err:                  # not capturable: time the calls themselves
        out = time_launches(torch, fn, reps)
        out["timing"] += (f"; the forward called directly, the harness's glue evaluation "
                          f"included (no CUDA graph: {type(err).__name__})")
        return out


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
