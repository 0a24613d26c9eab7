"""A task whose candidate is a whole kernel file: any op with a reference.

The GEMM task (task.py: GemmTask) is one kind, searched through its knob table. A
KernelTask is the other: the candidate is a DSL file written by the coder, judged by

1. `argus check` in a child (coder.check_candidate: the verifier, counterexamples);
2. the interpreter in a child (candidate_child.py) on each of the task's input sets, its
   outputs compared with the reference's (a wrong answer names the output, the input set,
   the worst element and the count off);
3. the cost model over the first set's run (kernel_cost.py): an estimated H200 time,
   labelled as an estimate, and the profile signals of that step.

With `device="cuda"` (`argus optimize ... --evaluator gpu`, or auto on a machine with a
GPU), steps 2 and 3 are the GPU's: the candidate is built and run there on every input set
and its first set timed with device events (gpu_child.py, a measurement, source "gpu"),
and, where Nsight Compute is found, one launch is profiled and its metrics give the step's
profile signals (candidate_run.profile_child, profile.derive_signals), which feed the next
step's knowledge retrieval as the cost model's do on the CPU.

Where the inputs and the reference come from is the task's builder: a DSL file's
reference (file_task.py: `FILE.py::KERNEL`, and the `attention` and `moe` ops), or a
KernelBench problem's Model (kernelbench.py). Both are run in isolated children.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from argus.agent.evaluators.base import Outcome
from argus.agent.tasks.candidate_run import run_child

INPUT_SETS = 3


@dataclass
class Tolerance:
    """|got - want| <= atol + rtol * |want| (KernelBench: 1e-2 both), or, with `scaled`,
    <= rtol * (|want| + max|want|) (argus run's rule per dtype)."""
    atol: float = 1e-2
    rtol: float = 1e-2
    scaled: bool = False

    def bad(self, got: np.ndarray, want: np.ndarray) -> np.ndarray:
        error = np.abs(got - want)
        if self.scaled:
            scale = float(np.abs(want).max()) if want.size else 0.0
            return ~(error <= self.rtol * (np.abs(want) + scale))
        return ~(error <= self.atol + self.rtol * np.abs(want))

    def describe(self) -> str:
        return (f"|error| <= {self.rtol:g} x (|ref| + max|ref|)" if self.scaled
                else f"atol {self.atol:g}, rtol {self.rtol:g}")


@dataclass
class KernelTask:
    op: str                                   # attention, moe, kernel, kernelbench
    label: str                                # "attention T=256", "kernelbench softmax.py"
    description: str                          # what to compute, for the prompt
    start_source: str                         # the kernel file the search starts from
    mode: str                                 # "kernel": one @kernel; "model": a ModelNew
    input_sets: list[dict[str, np.ndarray]]   # per set: name -> array (model: "0", "1", ...)
    expected: list[dict[str, np.ndarray]]     # per set: output name -> reference values
    kernel: str | None = None                 # mode "kernel": its name
    tensors: list[str] = field(default_factory=list)     # mode "kernel": parameter order
    outputs: list[str] = field(default_factory=list)
    constants: dict[str, int] = field(default_factory=dict)
    state: dict[str, np.ndarray] = field(default_factory=dict)   # mode "model": parameters
    init_args: list = field(default_factory=list)
    tolerance: Tolerance = field(default_factory=Tolerance)
    flops: float = 0.0
    baselines: dict[str, Any] = field(default_factory=dict)     # eager / torch.compile
    shape_classes: tuple[str, ...] = ()
    dtype: str = "bfloat16"
    timeout_s: float = 600.0
    device: str = "cpu"                       # "cuda": run and time candidates on the GPU
    ncu: str | None = ""                      # Nsight Compute ("": found on PATH; None: off)

    kind = "kernel"

    @property
    def shape_text(self) -> str:
        return self.label.split(" ", 1)[-1]

    def shape_class(self) -> list[str]:
        return list(self.shape_classes) or ["medium"]

    def describe(self) -> dict[str, Any]:
        return {"op": self.op, "label": self.label, "mode": self.mode, "kernel": self.kernel,
                "input_sets": len(self.input_sets), "tolerance": self.tolerance.describe(),
                "flops": self.flops, "baselines": self.baselines}

    def precheck(self, source: str, name: str = "kernel.py") -> Outcome | None:
        """A static rejection before `argus check` runs, or None: a ModelNew whose glue
        breaks the rules (a torch compute op standing in for a kernel: a fallback)."""
        if self.mode != "model":
            return None
        from argus.agent.tasks.glue import GlueError, read_glue

        try:
            read_glue(Path(name), source)
        except GlueError as err:
            return Outcome("invalid", source="glue", feedback=f"ModelNew rejected: {err}")
        return None

    def _job(self, path: Path) -> tuple[dict, dict[str, np.ndarray]]:
        arrays = {f"set{i}.{name}": value for i, inputs in enumerate(self.input_sets)
                  for name, value in inputs.items()}
        job = {"mode": self.mode, "path": str(Path(path).resolve()), "sets": len(self.input_sets),
               "constants": self.constants, "init_args": self.init_args}
        if self.mode == "kernel":
            job.update(kernel=self.kernel, tensors=self.tensors, outputs=self.outputs)
        return job, arrays

    def run_candidate(self, path: Path) -> tuple[dict, dict[str, np.ndarray]]:
        job, arrays = self._job(path)
        return run_child(job, arrays, self.state, self.timeout_s)

    def evaluate(self, path: str | Path) -> Outcome:
        """Run a checked candidate on every input set and score it (see the module doc)."""
        if self.device == "cuda":
            return self._evaluate_on_gpu(Path(path))
        reply, arrays = self.run_candidate(Path(path))
        if not reply.get("ok"):
            status = "compile_error" if reply.get("kind") == "parse" else (
                "incorrect" if reply.get("kind") == "glue" else "error")
            label = {"glue": "the ModelNew glue was rejected", "parse": "the kernel does not "
                     "build for this task", "timeout": "the run did not finish",
                     "interpret": "the interpreter stopped", "crash": "the run crashed"}
            return Outcome(status, source="interpreter", feedback=(
                f"{label.get(reply.get('kind'), 'the run failed')}: {reply.get('error')}"),
                details={"kind": reply.get("kind")})
        wrong = self.compare(arrays)
        if wrong:
            return Outcome("incorrect", source="interpreter", feedback=wrong,
                           details={"estimate": reply["estimate"]})
        est = reply["estimate"]
        time_ms = est["time_ms"]
        tflops = self.flops / (time_ms * 1e-3) / 1e12 if self.flops and time_ms else 0.0
        return Outcome("ok", tflops=tflops, time_ms=time_ms, source="cost_model",
                       feedback=estimate_text(est, self.baselines),
                       details={"estimate": est, "input_sets": len(self.input_sets),
                                "signals": list(est.get("signals", []))})

    def _evaluate_on_gpu(self, path: Path) -> Outcome:
        job, arrays = self._job(path)
        job["device"] = "cuda"
        reply, outputs = run_child(job, arrays, self.state, self.timeout_s)
        if not reply.get("ok"):
            kind = reply.get("kind")
            status = {"build": "compile_error", "parse": "compile_error"}.get(kind, "error")
            label = {"build": "the kernel did not build", "parse": "the kernel does not "
                     "build for this task", "launch": "the launch failed", "timeout": "the "
                     "run did not finish", "device": "the GPU could not be used",
                     "crash": "the run crashed"}
            return Outcome(status, source="gpu", feedback=(
                f"{label.get(kind, 'the GPU run failed')}: {reply.get('error')}"),
                details={"kind": kind})
        wrong = self.compare(outputs)
        if wrong:
            return Outcome("incorrect", source="gpu", feedback=wrong)
        gpu = reply["gpu"]
        time_ms = gpu["time_ms"]
        tflops = self.flops / (time_ms * 1e-3) / 1e12 if self.flops and time_ms else 0.0
        profile = self.profile(path)
        signals = profile.get("signals", [])
        return Outcome("ok", tflops=tflops, time_ms=time_ms, source="gpu",
                       feedback=measured_text(gpu, tflops, signals, profile, self.baselines),
                       details={"gpu": gpu, "input_sets": len(self.input_sets),
                                "signals": signals, "profile": profile})

    def profile(self, path: Path) -> dict:
        """Nsight Compute's metrics and the profile signals of one launch of the candidate
        on the first input set; {"kind": "unavailable"} without ncu."""
        from argus.agent.profile import DEFAULT_METRICS, derive_signals
        from argus.agent.tasks.candidate_run import profile_child
        from argus.runtime.toolchain import find_tool

        if self.mode != "kernel":
            return {"kind": "unavailable", "reason": "a ModelNew's forward launches several "
                    "kernels; only a kernel task's one launch is profiled", "signals": []}
        ncu = find_tool("ncu") if self.ncu == "" else self.ncu
        if not ncu:
            return {"kind": "unavailable", "reason": "ncu was not found", "signals": []}
        job, arrays = self._job(path)
        got = profile_child(job, arrays, ncu, list(DEFAULT_METRICS), self.kernel,
                            self.timeout_s)
        if not got["ok"]:
            return {"kind": "ncu", "error": got["error"], "signals": []}
        return {"kind": "ncu", "metrics": got["metrics"],
                "signals": derive_signals(got["metrics"])}

    def compare(self, arrays: dict[str, np.ndarray]) -> str:
        """'' when every output of every set matches, else the wrong-answer summary."""
        lines = []
        for i, want_set in enumerate(self.expected):
            for name, want in want_set.items():
                got = arrays.get(f"out{i}.{name}")
                if got is None:
                    lines.append(f"input set {i}: output {name} is missing (the candidate "
                                 f"returned fewer outputs)")
                    continue
                got = np.asarray(got, np.float64)
                want = np.asarray(want, np.float64)
                if got.shape != want.shape:
                    lines.append(f"input set {i}: output {name} has shape {got.shape}, the "
                                 f"reference {want.shape}")
                    continue
                bad = self.tolerance.bad(got, want)
                if not bad.any():
                    continue
                nans = int(np.isnan(got).sum())
                error = np.where(np.isnan(got), np.inf, np.abs(got - want))
                worst = np.unravel_index(int(np.argmax(error)), error.shape)
                first = tuple(int(x) for x in np.argwhere(bad)[0])
                lines.append(
                    f"input set {i}: output {name}: {int(bad.sum())} of {got.size} elements "
                    f"off ({self.tolerance.describe()}); worst at {tuple(map(int, worst))}: "
                    f"got {got[worst]:.6g}, expected {want[worst]:.6g}; first off at {first}: "
                    f"got {got[first]:.6g}, expected {want[first]:.6g}"
                    + (f"; {nans} NaN (elements never written?)" if nans else ""))
        where = "the GPU" if self.device == "cuda" else "the interpreter"
        return (f"wrong answer on {where}:\n" + "\n".join(lines)) if lines else ""


def measured_text(gpu: dict, tflops: float, signals: list[str], profile: dict,
                  baselines: dict | None = None) -> str:
    """The feedback of a measured candidate: its time on the GPU, the profile's signals."""
    forward = "launches_per_forward" in gpu         # a ModelNew: one forward of its kernels
    unit = "forward" if forward else "launch"
    lines = [f"MEASURED on {gpu['device']}: median {gpu['time_ms'] * 1e3:.2f} us per {unit} "
             f"(p10 {gpu['p10_ms'] * 1e3:.2f}, p90 {gpu['p90_ms'] * 1e3:.2f}; {gpu['reps']} "
             f"{unit}s, {gpu['timing']})" + (f", {tflops:.1f} TFLOP/s" if tflops else "")]
    if forward:
        lines.append(f"the forward launches {gpu['launches_per_forward']} kernel(s)"
                     + (f"; {gpu['dtype_conversions']} tensor(s) converted to a kernel's "
                        f"declared dtype by the harness (timed with it)"
                        if gpu.get("dtype_conversions") else ""))
    for name, b in (baselines or {}).items():
        if b.get("time_ms"):
            lines.append(f"{name}: {b['time_ms'] * 1e3:.2f} us ({b.get('source', '')}), "
                         f"{b['time_ms'] / gpu['time_ms']:.2f}x of it")
    if profile.get("kind") == "ncu" and "error" not in profile:
        lines.append(f"profile (ncu): signals {', '.join(signals) or 'none'}")
    elif profile.get("error"):
        lines.append(f"profile: ncu failed ({profile['error'][:200]})")
    return "\n".join(lines)


def estimate_text(est: dict, baselines: dict | None = None) -> str:
    text = (f"correct on every input set; ESTIMATED {est['time_ms'] * 1e3:.2f} us on an H200 "
            f"(cost model over the interpreter run, not a measurement): {est['blocks']} "
            f"blocks, {est['blocks_per_sm']} per SM, tensor {est['tensor_utilisation']:.0%}, "
            f"memory {est['memory_utilisation']:.0%}, special functions "
            f"{est['sfu_utilisation']:.0%} of peak; signals: "
            f"{', '.join(est['signals']) or 'none'}")
    for name, base in (baselines or {}).items():
        if base.get("time_ms"):
            text += (f"; {name} {base['time_ms'] * 1e3:.2f} us ({base['source']}): this "
                     f"candidate runs at {base['time_ms'] / est['time_ms']:.2f}x its speed")
    return text
