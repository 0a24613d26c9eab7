"""The child that runs a candidate on the interpreter: `python -m argus.agent.tasks.candidate_child JOB_DIR`.

Started by candidate_run.py in its own process (a timeout, resource limits, a bare
environment), so a candidate that loops or blows up memory costs a failed step, not the
planner. The candidate file is parsed by the DSL frontend and its ModelNew glue is
evaluated from the syntax tree (glue.py); nothing of the file is imported or executed.

Modes: "kernel" runs one @kernel on each input set (the task's tensors by name, outputs
poisoned); "model" runs ModelNew.forward on each input set, its kernels launched on the
interpreter. The first input set's launches are timed by the cost model (kernel_cost.py).
With `job["device"] == "cuda"` the candidate is built and run on the GPU instead (a kernel,
or ModelNew's glue over device tensors with its kernels launched by the runtime), and its
first set timed there (gpu_child.py).
Results: result.npz and one JSON line on stdout.
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import numpy as np


class CandidateFailed(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Launcher:
    """Runs the file's kernels on the interpreter; times them while `timed` is set."""

    def __init__(self, path: str, base_constants: dict):
        self.path = path
        self.base = dict(base_constants)
        self.parsed: dict[tuple, object] = {}
        self.timed = False
        self.launches: list[dict] = []

    def kernel(self, name: str, constants: dict):
        from argus.frontend import parse_file
        from argus.frontend.errors import DSLError

        key = (name, tuple(sorted(constants.items())))
        if key not in self.parsed:
            try:
                kernels = parse_file(self.path, {**self.base, **constants} or None)
            except DSLError as err:
                raise CandidateFailed("parse", err.format()) from None
            if name not in kernels:
                raise CandidateFailed("parse", f"no @kernel {name!r} in the candidate; it "
                                               f"defines {', '.join(kernels) or 'none'}")
            self.parsed[key] = kernels[name]
        return self.parsed[key]

    def __call__(self, name: str, args: list, keywords: dict, grid=None, line=None) -> None:
        from argus.agent.tasks.kernel_calls import kernel_arguments
        from argus.agent.tasks.kernel_cost import launch_timer, timing
        from argus.interp.errors import InterpretError
        from argus.interp.evaluator import bind_symbols, interpret
        from argus.runtime.interpreted import _with_grid

        where = f" (line {line})" if line else ""
        probe = self.kernel(name, {k: v for k, v in keywords.items()})
        tensors, params = kernel_arguments(probe, name, args, where,
                                           lambda a: isinstance(a, np.ndarray), CandidateFailed)
        ir = probe if grid is None else _with_grid(probe, (grid,) if isinstance(grid, int)
                                                   else tuple(grid))
        values = {p.name: np.asarray(t, np.int32 if t.dtype.kind in "iu" else np.float32)
                  for p, t in zip(params, tensors)}
        try:
            timer = launch_timer(ir, bind_symbols(ir, values))
            if self.timed:
                with timing(timer):
                    result = interpret(ir, dict(values))
            else:
                result = interpret(ir, dict(values))
        except InterpretError as err:
            raise CandidateFailed("interpret", f"kernel {name}{where}: {err}") from None
        if not result.ok:
            raise CandidateFailed("interpret", f"kernel {name}{where} failed on the "
                                               f"interpreter: " + "; ".join(result.failures()))
        for p, t in zip(params, tensors):
            t[...] = result.outputs[p.name].astype(t.dtype)
        if self.timed:
            est = timer.estimate(ir)
            est["kernel"] = name
            self.launches.append(est)


def combined(launches: list[dict]) -> dict:
    """One estimate for a forward of several launches: times and totals add up."""
    from argus.agent.tasks.kernel_cost import signals

    if len(launches) == 1:
        return launches[0]
    seconds = sum(e["seconds"] for e in launches)
    out = {"seconds": seconds, "time_ms": seconds * 1e3,
           "blocks": sum(e["blocks"] for e in launches),
           "blocks_per_sm": min(e["blocks_per_sm"] for e in launches),
           "flops": sum(e["flops"] for e in launches), "bytes": sum(e["bytes"] for e in launches),
           "source": launches[0]["source"], "launches": [
               {"kernel": e["kernel"], "time_ms": e["time_ms"]} for e in launches]}
    for key in ("tensor_utilisation", "memory_utilisation", "sfu_utilisation"):
        out[key] = sum(e[key] * e["seconds"] for e in launches) / seconds if seconds else 0.0
    out["signals"] = signals(out)
    return out


def run(job_dir: str) -> dict:
    job = json.loads(Path(job_dir, "job.json").read_text(encoding="utf-8"))
    with np.load(Path(job_dir, "inputs.npz")) as data:
        arrays = {k: data[k] for k in data.files}
    state = {}
    if Path(job_dir, "state.npz").exists():
        with np.load(Path(job_dir, "state.npz")) as data:
            state = {k: data[k] for k in data.files}
    launch = Launcher(job["path"], job.get("constants", {}))
    source = Path(job["path"]).read_text(encoding="utf-8")
    if job.get("device") == "cuda":
        from argus.agent.tasks import gpu_child
        if job["mode"] == "kernel":
            reply, out = gpu_child.run_kernel_on_gpu(job, arrays, launch.kernel(job["kernel"], {}),
                                                     CandidateFailed)
        else:
            reply, out = gpu_child.run_model_on_gpu(job, arrays, state, source, launch.kernel,
                                                    CandidateFailed)
        np.savez(Path(job_dir, "result.npz"), **out)
        return reply
    out: dict[str, np.ndarray] = {}
    runner = None
    if job["mode"] == "model":
        from argus.agent.tasks.glue import GlueError, GlueRunner, read_glue
        try:
            runner = GlueRunner(read_glue(Path(job["path"]), source), source, state, launch,
                                job.get("init_args", []))
        except GlueError as err:
            raise CandidateFailed("glue", str(err)) from None
    for i in range(job["sets"]):
        launch.timed = i == 0
        if job["mode"] == "kernel":
            given = {k.split(".", 1)[1]: v.copy() for k, v in arrays.items()
                     if k.startswith(f"set{i}.")}
            names = job["tensors"]
            launch(job["kernel"], [given[n] for n in names], {})
            for n in job["outputs"]:
                out[f"out{i}.{n}"] = given[n]
        else:
            from argus.agent.tasks.glue import GlueError
            count = sum(1 for k in arrays if k.startswith(f"set{i}."))
            inputs = [arrays[f"set{i}.{j}"].copy() for j in range(count)]
            try:
                got = runner.forward(inputs)
            except GlueError as err:
                raise CandidateFailed("glue", str(err)) from None
            except (ValueError, IndexError, TypeError) as err:
                raise CandidateFailed("glue", f"ModelNew.forward: {err}") from None
            got = got if isinstance(got, tuple) else (got,)
            for j, g in enumerate(got):
                if not isinstance(g, np.ndarray):
                    raise CandidateFailed("glue", f"ModelNew.forward returned {type(g).__name__}"
                                                  f", not a tensor")
                out[f"out{i}.{j}"] = g
    if not launch.launches:
        raise CandidateFailed("glue", "the candidate launched no DSL kernel")
    np.savez(Path(job_dir, "result.npz"), **out)
    return {"ok": True, "estimate": combined(launch.launches)}


def main() -> None:
    try:
        reply = run(sys.argv[1])
    except CandidateFailed as err:
        reply = {"ok": False, "kind": err.kind, "error": str(err)[:4000]}
    except Exception as err:              # an interpreter bug: reported, never a traceback up
        reply = {"ok": False, "kind": "internal",
                 "error": f"{type(err).__name__}: {err}"[:2000],
                 "trace": traceback.format_exc()[-2000:]}
    sys.stdout.write("\n" + json.dumps(reply) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
