"""Parallel evaluation: candidates verified (CPU) and timed (one GPU each) as jobs of an
evaluation backend, so several processes, GPUs or machines judge candidates side by side.

- `SerialBackend`: every job in this process, one after another (the reference path);
- `LocalPoolBackend`: a pool of processes on this machine (the embedded default, no
  cluster): CPU workers for verification, one single-process pool per GPU for timing;
- `RayBackend`: a Ray cluster (`--ray auto|ADDRESS`): verification as Ray tasks with
  num_cpus=1, timing with num_gpus=1. Ray is imported only here, when asked for.

Every backend runs the same job functions (`work.run_job`) and reports, per job, the worker
that ran it, so a run's report can show the candidates per worker.
"""
from argus.agent.parallel.backend import Backend, BackendError, SerialBackend
from argus.agent.parallel.choose import make_backend
from argus.agent.parallel.local_pool import LocalPoolBackend

__all__ = ["Backend", "BackendError", "SerialBackend", "LocalPoolBackend", "make_backend"]
