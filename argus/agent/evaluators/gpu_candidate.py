"""The candidate the harness loads in its child process: the backend's GEMM at one config.

The configuration arrives in the environment variable ARGUS_AGENT_GEMM_CONFIG (JSON of
GemmConfig knobs), set by GpuEvaluator before the child starts. Destination passing, as
the harness requires: `gemm(inputs, outputs)` writes C = A @ B into outputs[0].
Expected backend signature (argus/ops, being written): `matmul(a, b, out=c, **knobs)`.
"""
from __future__ import annotations

import json
import os

from argus.agent.gemm_config import parse_config

_CONFIG = None


def _config():
    global _CONFIG
    if _CONFIG is None:
        _CONFIG = parse_config(json.loads(os.environ["ARGUS_AGENT_GEMM_CONFIG"]))
    return _CONFIG


def gemm(inputs, outputs) -> None:
    from argus.ops import matmul

    a, b = inputs
    matmul(a, b, out=outputs[0], **_config().to_json())
