"""The isolated child that builds a KernelBench problem: `python -I kernelbench_child.py JOB_DIR`.

It imports torch and numpy, nothing of Argus; it runs in an empty job folder with a bare
environment and resource limits (kernelbench.py starts it). It executes the problem file
(user input, trusted to be a problem, still kept out of the harness's process), builds
`Model(*get_init_inputs())` under a fixed seed, draws `sets` input sets from `get_inputs()`
(seed + i each), runs the Model on each, and writes the inputs, the outputs and the Model's
state_dict as NumPy arrays (float32; int32 for integer tensors). It also prices the
Model: on a CUDA device eager PyTorch (also replayed as one CUDA graph: the device time a
candidate's graph-replayed forward compares with) and torch.compile are timed (CUDA
events, median);
without one both are ESTIMATED for the job's peak rates: eager as the sum over the aten
ops it dispatches of max(flops / peak, bytes / bandwidth) + a launch each, torch.compile
as one fused pass (total flops, the inputs and outputs' bytes) + a launch per matmul-like
op. An audit hook refuses sockets and writes outside the job folder.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import traceback

import numpy as np

MATMUL_LIKE = ("mm", "addmm", "bmm", "matmul", "linear", "convolution", "baddbmm",
               "_scaled_dot_product")


def install_guard(job_dir: str) -> None:
    root = os.path.realpath(job_dir) + os.sep

    def guard(event, args):
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if writing and isinstance(path, (str, bytes)):
                if os.fsdecode(path) == os.devnull:   # torch.compile silences its children
                    return
                if not (os.path.realpath(os.fsdecode(path)) + os.sep).startswith(root):
                    raise PermissionError(f"the problem may not write {path!r}")
        elif event.startswith(("socket.connect", "socket.bind", "socket.sendto",
                               "socket.getaddrinfo")):
            raise PermissionError(f"the problem may not use the network ({event})")

    sys.addaudithook(guard)


def to_numpy(t):
    import torch

    t = t.detach().to("cpu")
    if t.is_floating_point():
        return t.to(torch.float32).numpy()
    if t.dtype == torch.bool:
        return t.to(torch.int32).numpy()
    return t.to(torch.int32).numpy()


def estimate(model, inputs, peaks: dict) -> dict:
    """Eager and torch.compile times priced from the aten ops the forward dispatches."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    ops = []

    def nbytes(x):
        return x.numel() * x.element_size() if isinstance(x, torch.Tensor) else 0

    class Census(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            flat_in = [a for a in torch.utils._pytree.tree_leaves((args, kwargs))
                       if isinstance(a, torch.Tensor)]
            flat_out = [o for o in torch.utils._pytree.tree_leaves(out)
                        if isinstance(o, torch.Tensor)]
            storages = {a.untyped_storage().data_ptr() for a in flat_in}
            if flat_out and all(o.untyped_storage().data_ptr() in storages for o in flat_out):
                return out                        # a view: no kernel
            flops = 0
            packet = func.overloadpacket
            if packet in flop_registry:
                try:
                    flops = flop_registry[packet](*args, **kwargs, out_val=out)
                except Exception:
                    flops = 0
            dtype = flat_out[0].dtype if flat_out else torch.float32
            ops.append({"op": str(packet).split(".")[-1], "flops": float(flops),
                        "bytes": float(sum(map(nbytes, flat_in)) + sum(map(nbytes, flat_out))),
                        "low": dtype in (torch.bfloat16, torch.float16)})
            return out

    with torch.no_grad(), Census():
        model(*inputs)
    bw, launch = peaks["bytes_per_s"], peaks["launch_s"]
    rate = lambda op: peaks["flops_16"] if op["low"] else peaks["flops_32"]   # noqa: E731
    eager = sum(max(op["flops"] / rate(op), op["bytes"] / bw) + launch for op in ops)
    flops = sum(op["flops"] for op in ops)
    compulsory = sum(nbytes(x) for x in inputs) + sum(
        nbytes(p) for p in model.state_dict().values())
    with torch.no_grad():
        outs = model(*inputs)
    compulsory += sum(nbytes(o) for o in torch.utils._pytree.tree_leaves(outs))
    matmuls = sum(1 for op in ops if op["op"].startswith(MATMUL_LIKE))
    fused = max(flops / peaks["flops_32"], compulsory / bw) + launch * max(1, matmuls + 1)
    label = "ESTIMATE from the aten ops' flops and bytes at H200 peaks (no GPU here)"
    return {"eager PyTorch": {"time_ms": eager * 1e3, "source": "eager " + label,
                              "ops": len(ops)},
            "torch.compile": {"time_ms": fused * 1e3, "source": "torch.compile, fused "
                              + label, "kernels": max(1, matmuls + 1)},
            "flops": flops}


def measure(model, inputs, reps: int = 20) -> dict:
    """On CUDA: eager and torch.compile timed with CUDA events (median of `reps`)."""
    import torch

    model = model.cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]

    def timed(fn):
        with torch.no_grad():
            for _ in range(3):
                fn(*inputs)
            torch.cuda.synchronize()
            times = []
            for _ in range(reps):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                fn(*inputs)
                b.record()
                torch.cuda.synchronize()
                times.append(a.elapsed_time(b))
        return statistics.median(times)

    out = {"eager PyTorch": {"time_ms": timed(model), "source": "eager PyTorch, measured"}}
    try:           # the same forward as one CUDA graph: its device time, no host dispatch
        with torch.no_grad():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                model(*inputs)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                model(*inputs)
        out["eager PyTorch, CUDA graph"] = {
            "time_ms": timed(lambda *a: graph.replay()),
            "source": "eager PyTorch's kernels replayed as one CUDA graph, measured"}
    except Exception as err:
        out["eager PyTorch, CUDA graph"] = {"time_ms": None, "source": f"not capturable: "
                                            f"{type(err).__name__}: {str(err)[:200]}"}
    try:
        out["torch.compile"] = {"time_ms": timed(torch.compile(model)),
                                "source": "torch.compile, measured"}
    except Exception as err:
        out["torch.compile"] = {"time_ms": None, "source": f"torch.compile failed: "
                                f"{type(err).__name__}: {str(err)[:200]}"}
    return out


def run(job_dir: str) -> dict:
    import torch

    job = json.loads(open(os.path.join(job_dir, "job.json"), encoding="utf-8").read())
    install_guard(job_dir)
    torch.set_num_threads(1)
    namespace = {"__name__": "kernelbench_problem", "__file__": job["filename"]}
    try:
        exec(compile(job["source"], job["filename"], "exec"), namespace)
        missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in namespace]
        if missing:
            return {"ok": False, "error": f"the problem defines no {', '.join(missing)}; a "
                                          f"KernelBench problem has class Model(nn.Module), "
                                          f"get_inputs() and get_init_inputs()", "line": 1}
        init_args = list(namespace["get_init_inputs"]())
        torch.manual_seed(job["seed"])
        model = namespace["Model"](*init_args).eval()
        arrays, count = {}, 0
        for i in range(job["sets"]):
            torch.manual_seed(job["seed"] + 1 + i)
            inputs = list(namespace["get_inputs"]())
            with torch.no_grad():
                outs = model(*inputs)
            outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
            for j, x in enumerate(inputs):
                arrays[f"set{i}.{j}"] = to_numpy(x) if isinstance(x, torch.Tensor) else \
                    np.asarray(x)
            for j, y in enumerate(outs):
                arrays[f"out{i}.{j}"] = to_numpy(y)
            count = len(outs)
            if i == 0:
                first = inputs
        baselines = (measure(model, first) if torch.cuda.is_available()
                     else estimate(model, first, job["peaks"]))
        state = {k: to_numpy(v) for k, v in model.state_dict().items()}
    except BaseException as err:           # the problem's code failed
        stack = traceback.extract_tb(err.__traceback__)
        frames = [f for f in stack if f.filename == job["filename"]]
        return {"ok": False, "error": f"{type(err).__name__}: {err}"[:2000],
                "line": frames[-1].lineno if frames else None}
    np.savez(os.path.join(job_dir, "problem.npz"), **arrays)
    np.savez(os.path.join(job_dir, "state.npz"), **state)
    json_args = [a if isinstance(a, (int, float, bool, str)) else repr(a) for a in init_args]
    return {"ok": True, "init_args": json_args, "outputs": count,
            "inputs": len(first), "baselines": baselines}


def main() -> None:
    try:
        reply = run(sys.argv[1])
    except Exception as err:
        reply = {"ok": False, "error": f"harness: {type(err).__name__}: {err}", "line": None}
    sys.stdout.write("\n" + json.dumps(reply) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
