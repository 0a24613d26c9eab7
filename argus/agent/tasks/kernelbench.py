"""KernelBench problems as kernel tasks: `argus optimize --kernelbench problem.py`.

A problem file defines `class Model(nn.Module)` with `forward`, `get_inputs()` and
`get_init_inputs()`. The harness builds it in an isolated child (kernelbench_child.py:
torch, a bare environment, resource limits, no network, writes only in its job folder):
the Model under a fixed seed, `INPUT_SETS` input sets, the Model's outputs on each, its
parameters, and the baselines, eager PyTorch and torch.compile (timed on a GPU, estimated
from the aten ops without one). The reference is that Model on those inputs; candidates
are compared with KernelBench's tolerances (atol = rtol = 1e-2).

The candidate is a file with DSL kernels and a `ModelNew` whose forward is glue around
them (glue.py: allocation and views only; a torch compute op is rejected as a fallback,
with its line). It runs with the Model's parameters, shared by name: on the interpreter
with the cost model's estimate, or on the GPU (gpu_child.run_model_on_gpu: its kernels
built and launched by the runtime, the forward timed) where the baselines are measured too.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from argus.agent.task import TaskError
from argus.agent.tasks.kernel_task import INPUT_SETS, KernelTask, Tolerance
from argus.input_limits import REFERENCE_MEMORY_BYTES, REFERENCE_SECONDS

CHILD = Path(__file__).with_name("kernelbench_child.py")
MAX_PROBLEM_BYTES = 200_000


def _peaks() -> dict:
    from argus.agent.roofline_peaks import PEAKS
    from argus.agent.tasks.kernel_cost import LAUNCH_S

    h200 = PEAKS["H200"]
    return {"bytes_per_s": h200["bytes_per_s"], "flops_16": h200["flops"]["bfloat16"],
            "flops_32": h200["flops"]["float32"], "launch_s": LAUNCH_S}


def build_problem(path: Path, sets: int = INPUT_SETS, seed: int = 0,
                  gpu: bool | None = None) -> tuple[dict, dict, dict]:
    """(the child's reply, problem arrays, state arrays); TaskError naming file:line.
    `gpu` (default: whether torch sees a CUDA device here): the child keeps what CUDA and
    torch.compile need of the environment (candidate_run.GPU_ENV) and has no address-space
    limit (a CUDA context reserves far more virtual memory than it uses), so it measures
    the baselines on the GPU."""
    if gpu is None:
        from argus.agent.evaluators.gpu import cuda_available
        gpu = cuda_available()
    path = Path(path)
    if not path.is_file():
        raise TaskError(f"{path}: no such file")
    source = path.read_text(encoding="utf-8", errors="replace")
    if len(source) > MAX_PROBLEM_BYTES:
        raise TaskError(f"{path}: {len(source)} characters; a problem file is at most "
                        f"{MAX_PROBLEM_BYTES}")
    with tempfile.TemporaryDirectory(prefix="argus-kernelbench-") as job_dir:
        job = {"filename": str(path), "source": source, "sets": sets, "seed": seed,
               "peaks": _peaks()}
        Path(job_dir, "job.json").write_text(json.dumps(job), encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "HOME": job_dir, "TMPDIR": job_dir, "LANG": "C.UTF-8",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        if gpu:
            from argus.agent.tasks.candidate_run import GPU_ENV
            env.update({k: os.environ[k] for k in GPU_ENV
                        if k in os.environ and k != "ARGUS_CACHE_DIR"})
        try:
            proc = subprocess.run([sys.executable, "-I", str(CHILD), job_dir], cwd=job_dir,
                                  env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=REFERENCE_SECONDS * 2,
                                  preexec_fn=_gpu_limits if gpu else _limits)
        except subprocess.TimeoutExpired:
            raise TaskError(f"{path}:1: building the problem did not finish within "
                            f"{REFERENCE_SECONDS * 2} s; use smaller shapes") from None
        lines = proc.stdout.rstrip("\n").splitlines()
        try:
            reply = json.loads(lines[-1]) if lines else None
        except json.JSONDecodeError:
            reply = None
        if not isinstance(reply, dict):
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
            raise TaskError(f"{path}:1: the problem's child ended without a result (exit "
                            f"status {proc.returncode}: {tail})")
        if not reply.get("ok"):
            raise TaskError(f"{path}:{reply.get('line') or 1}: the problem failed: "
                            f"{reply.get('error')}")
        with np.load(Path(job_dir, "problem.npz")) as data:
            arrays = {k: data[k] for k in data.files}
        with np.load(Path(job_dir, "state.npz")) as data:
            state = {k: data[k] for k in data.files}
    return reply, arrays, state


def kernelbench_task(path: Path, sets: int = INPUT_SETS, start: Path | None = None,
                     seed: int = 0, gpu: bool | None = None) -> KernelTask:
    reply, arrays, state = build_problem(Path(path), sets, seed, gpu)
    input_sets = [{str(j): arrays[f"set{i}.{j}"] for j in range(reply["inputs"])}
                  for i in range(sets)]
    expected = [{str(j): arrays[f"out{i}.{j}"] for j in range(reply["outputs"])}
                for i in range(sets)]
    shapes = ", ".join(f"input {j}: {list(v.shape)}" for j, v in input_sets[0].items())
    outs = ", ".join(f"output {j}: {list(v.shape)}" for j, v in expected[0].items())
    baselines = {k: v for k, v in reply["baselines"].items() if isinstance(v, dict)}
    problem = Path(path).read_text(encoding="utf-8", errors="replace")
    return KernelTask(
        op="kernelbench", label=f"kernelbench {Path(path).name}",
        description=(f"the KernelBench problem {Path(path).name} ({shapes}; {outs}; "
                     f"init inputs {reply['init_args']}); write DSL kernels and a ModelNew "
                     f"with the Model's forward signature. The problem file:\n```python\n"
                     f"{problem[:6000]}```"),
        start_source=Path(start).read_text(encoding="utf-8") if start else "",
        mode="model", input_sets=input_sets, expected=expected, state=state,
        init_args=reply["init_args"], tolerance=Tolerance(1e-2, 1e-2),
        flops=float(reply["baselines"].get("flops", 0.0) or 0.0), baselines=baselines,
        dtype="float32")


def _gpu_limits() -> None:
    from argus.agent.tasks.candidate_run import cap_limits
    cap_limits(None)


def _limits() -> None:
    from argus.agent.tasks.candidate_run import cap_limits
    cap_limits(REFERENCE_MEMORY_BYTES)
