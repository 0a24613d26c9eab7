"""The embedded backend: a pool of processes on this machine, no cluster.

Verification jobs go to a process pool of `workers` CPU workers (default: the CPU count).
Timing jobs go to one single-process pool per GPU, its worker started with
CUDA_VISIBLE_DEVICES set to that GPU alone, so at most one timing job runs on a GPU at a
time and two candidates never share one while they are timed; a job goes to the GPU with
the fewest jobs waiting. The GPUs are counted (torch.cuda.device_count) only when the first
timing job arrives, so a CPU-only run never imports torch for this. Processes are spawned
(no fork of a process that may hold a CUDA context).
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from argus.agent.parallel.backend import Backend, BackendError
from argus.agent.parallel.work import pin_gpu, run_job


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def local_gpus() -> list[str]:
    try:
        import torch
    except ImportError:
        return []
    return [str(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() \
        else []


class LocalPoolBackend(Backend):
    name = "local"

    def __init__(self, workers: int | None = None, gpus: int | list | None = None):
        """`workers`: CPU processes for verification (default the CPU count); `gpus`: the
        GPU ids timing jobs may use (an int n means 0..n-1; default: every CUDA GPU)."""
        super().__init__()
        self.max_workers = default_workers() if workers is None else int(workers)
        if self.max_workers < 1:
            raise ValueError("the local pool needs at least one worker")
        self._gpus = [str(g) for g in range(gpus)] if isinstance(gpus, int) else \
            (None if gpus is None else [str(g) for g in gpus])
        self._cpu: ProcessPoolExecutor | None = None
        self._per_gpu: dict[str, ProcessPoolExecutor] = {}
        self._waiting: dict[str, int] = {}

    def gpus(self) -> list[str]:
        if self._gpus is None:
            self._gpus = local_gpus()
        return self._gpus

    def _submit(self, kind: str, ref: str, arg: Any) -> Future:
        if kind == "verify":
            if self._cpu is None:
                self._cpu = ProcessPoolExecutor(self.max_workers, mp_context=get_context("spawn"))
            return self._cpu.submit(run_job, ref, arg)
        gpus = self.gpus()
        if not gpus:
            raise BackendError("a timing job needs a GPU and this machine has no CUDA GPU; "
                               "use --evaluator cpu, or --ray ADDRESS for a cluster with GPUs")
        gpu = min(gpus, key=lambda g: (self._waiting.get(g, 0), gpus.index(g)))
        pool = self._per_gpu.get(gpu)
        if pool is None:
            pool = self._per_gpu[gpu] = ProcessPoolExecutor(
                1, mp_context=get_context("spawn"), initializer=pin_gpu, initargs=(gpu,))
        with self._lock:
            self._waiting[gpu] = self._waiting.get(gpu, 0) + 1
        future = pool.submit(run_job, ref, arg)

        def release(_f) -> None:
            with self._lock:
                self._waiting[gpu] -= 1

        future.add_done_callback(release)
        return future

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "cpu_workers": self.max_workers,
                "gpus": list(self._gpus or [])}

    def close(self) -> None:
        for pool in [self._cpu, *self._per_gpu.values()]:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._cpu, self._per_gpu = None, {}
