"""The job wrapper every backend runs on its workers: `run_job(ref, arg)` imports the job
function named by `ref` ("module:function"), calls it on `arg` and returns its value with
the worker that ran it (host:pid, and the GPU it was given) and the seconds it took.

Functions travel by name, not by value: a worker imports the same module the driver would,
so what runs is the project's code, never a pickled closure.
"""
from __future__ import annotations

import importlib
import os
import socket
import time
from typing import Any

KINDS = ("verify", "time")


def resolve(ref: str):
    module, _, name = ref.partition(":")
    if not module or not name:
        raise ValueError(f"job function {ref!r} is not 'module:function'")
    return getattr(importlib.import_module(module), name)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_job(ref: str, arg: Any) -> dict[str, Any]:
    start = time.perf_counter()
    value = resolve(ref)(arg)
    return {"value": value, "worker": worker_id(),
            "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "seconds": time.perf_counter() - start}


def pin_gpu(index: str) -> None:
    """Initializer of a local timing worker: this process sees one GPU only."""
    os.environ["CUDA_VISIBLE_DEVICES"] = str(index)
