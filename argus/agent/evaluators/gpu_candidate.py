"""The candidate the harness loads in its child process: the backend's GEMM at one config.

The configuration arrives in the environment variable ARGUS_AGENT_GEMM_CONFIG (JSON of
GemmConfig knobs), set before the child starts (one child per configuration) or by
gpu_worker before each job (one child for many). Destination passing, as
the harness requires: `gemm(inputs, outputs)` writes C = A @ B into outputs[0] by calling
the backend as `matmul(a, b, out=c, **knobs)`. The backend is `argus.ops:matmul` (being
written), or the "module:function" named by ARGUS_AGENT_GEMM_BACKEND (tests use a stand-in).
"""
from __future__ import annotations

import importlib
import json
import os

from argus.agent.gemm_config import parse_config

CONFIG_ENV = "ARGUS_AGENT_GEMM_CONFIG"
BACKEND_ENV = "ARGUS_AGENT_GEMM_BACKEND"
DEFAULT_BACKEND = "argus.ops:matmul"

_STATE: dict = {}


def backend():
    """(the backend function, the knobs of the current configuration). The configuration is
    re-read when the variable changes: gpu_worker measures many in one process."""
    if "fn" not in _STATE:
        module, _, name = os.environ.get(BACKEND_ENV, DEFAULT_BACKEND).partition(":")
        _STATE["fn"] = getattr(importlib.import_module(module), name)
    raw = os.environ[CONFIG_ENV]
    if _STATE.get("raw") != raw:
        _STATE["knobs"] = parse_config(json.loads(raw)).to_json()
        _STATE["raw"] = raw
    return _STATE["fn"], _STATE["knobs"]


def gemm(inputs, outputs) -> None:
    fn, knobs = backend()
    fn(inputs[0], inputs[1], out=outputs[0], **knobs)
