"""The backend a run asks for: `--ray ADDRESS` a Ray cluster, else the local process
pool of `--workers N` processes (0: serial, in this process)."""
from __future__ import annotations

from argus.agent.parallel.backend import Backend, SerialBackend
from argus.agent.parallel.local_pool import LocalPoolBackend


def make_backend(ray: str | None = None, workers: int | None = None) -> Backend:
    if ray:
        from argus.agent.parallel.ray_backend import RayBackend
        return RayBackend(ray)
    if workers is not None and workers <= 0:
        return SerialBackend()
    return LocalPoolBackend(workers)
