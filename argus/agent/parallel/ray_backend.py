"""A Ray cluster as the evaluation backend (`--ray auto|ADDRESS`).

Verification jobs are Ray tasks asking num_cpus=1, timing jobs num_gpus=1: Ray runs a
timing task only where a whole GPU is free and sets CUDA_VISIBLE_DEVICES to it, so no two
candidates are timed on one GPU at once, on any machine of the cluster. Ray is imported
here and only here, when this backend is made; without it the error says how to install it.

`address`: "auto" joins the cluster this machine belongs to (`ray start` ran here),
"ray://host:10001" or "host:6379" a remote one, "local" starts a private one-machine
cluster (what the tests use, on loopback). Workers import argus by name (work.run_job);
the driver's package folder is put on their PYTHONPATH so a one-machine cluster runs this
checkout's code (on other machines argus must be installed, at the same version).
"""
from __future__ import annotations

import os
import socket
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from argus.agent.parallel.backend import Backend, BackendError
from argus.agent.parallel.work import run_job

INSTALL = "pip install 'argus-kernels[ray]' (or pip install ray)"


PROBE_S = 5.0       # how long joining an address may wait for its first TCP answer


def unreachable(address: str) -> str:
    """Why nothing answers at a "host:port" or "ray://host:port" address ("" when
    something does, or for "auto"/"local", which Ray resolves itself): ray.init would
    otherwise wait minutes for a cluster that is not there."""
    if address in ("auto", "local"):
        return ""
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return (f"--ray {address!r} is not 'auto', 'local', HOST:PORT (the head's GCS port, "
                f"6379) or ray://HOST:PORT (the client port, 10001)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_S).close()
    except OSError as err:
        return (f"nothing answers at {hostport} ({err}); start the head there with "
                f"`ray start --head --port {port}` or give the right address")
    return ""


def import_ray():
    try:
        import ray
    except ImportError:
        raise BackendError(f"--ray needs the ray package, which is not installed here; "
                           f"{INSTALL}, or leave --ray out for the local process pool") from None
    return ray


class RayBackend(Backend):
    name = "ray"

    def __init__(self, address: str = "auto", **init_kwargs):
        """Join (or, for "local", start) the cluster at `address`; `init_kwargs` go to
        ray.init (num_cpus, num_gpus, ... for a local one)."""
        super().__init__()
        ray = import_ray()
        self.address = address
        self._owned = False
        if not ray.is_initialized():
            why = unreachable(address)
            if why:
                raise BackendError(why)
            root = str(Path(__file__).resolve().parents[3])
            path = os.pathsep.join(p for p in (root, os.getcwd(),
                                               os.environ.get("PYTHONPATH", "")) if p)
            init_kwargs.setdefault("runtime_env", {"env_vars": {"PYTHONPATH": path}})
            init_kwargs.setdefault("include_dashboard", False)
            init_kwargs.setdefault("logging_level", "ERROR")
            init_kwargs.setdefault("log_to_driver", False)
            try:
                ray.init(address=address, **init_kwargs)
            except (ConnectionError, RuntimeError, ValueError) as err:
                raise BackendError(f"cannot join the Ray cluster at {address!r}: {err}; start "
                                   f"one with `ray start --head` (then --ray auto) or give "
                                   f"its address") from None
            self._owned = True
        self._ray = ray
        self._tasks = {"verify": ray.remote(num_cpus=1)(run_job),
                       "time": ray.remote(num_cpus=1, num_gpus=1)(run_job)}

    def _submit(self, kind: str, ref: str, arg: Any) -> Future:
        if kind == "time" and not self._ray.cluster_resources().get("GPU"):
            raise BackendError(f"the Ray cluster at {self.address!r} has no GPU for a timing "
                               f"job; add a GPU node or use --evaluator cpu")
        return self._tasks[kind].remote(ref, arg).future()

    def describe(self) -> dict[str, Any]:
        resources = self._ray.cluster_resources() if self._ray.is_initialized() else {}
        return {**super().describe(), "address": self.address,
                "cluster": {k: resources[k] for k in ("CPU", "GPU") if k in resources}}

    def close(self) -> None:
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
        self._owned = False
