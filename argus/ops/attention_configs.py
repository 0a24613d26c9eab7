"""Which attention configuration each shape class gets: the module constants of
argus/kernels/attention.py other than the problem's own (dtype, head dim, GQA group,
causal, scale). ARGUS_ATTENTION_CONFIG='{"BN": 64, "S": 3}' overrides them (the knob sweep
of scripts/device_attention.sh compares variants so); argus.ops.attention puts a tuned
cache entry (attention_tuned.py) over the shape's defaults where the variable is not set,
and a call's explicit knobs (attention_into(..., knobs=)) over everything."""

from __future__ import annotations

import json
import os

from argus.limits import SMEM_PER_BLOCK
from argus.runtime.launch_errors import LaunchError

BLOCK_M = 128                     # query rows per block: two consumer warpgroups of 64
HEAD_DIMS = (64, 128)
KEY_BLOCKS = (64, 128)            # BN
KNOBS = ("BN", "S", "SPLIT_KV", "MASK", "OVERLAP", "LPT", "FOLD_SCALE",
         "PINGPONG", "DEFER", "WGS")   # attention.py's constants
CONSUMER_REGS = {2: 240, 3: 160}  # setmaxnreg of the consumers by their count (producer 24)


def roles(wgs: int) -> dict:
    """The constants that follow from the number of consumer warpgroups: their indices
    and their registers (the producer keeps 24: 128 * 24 + 128 * wgs * regs <= 64K)."""
    if wgs not in CONSUMER_REGS:
        raise LaunchError(f"WGS = {wgs!r}: the attention kernel takes 2 or 3 consumer "
                          "warpgroups")
    return {"WGS": wgs, "CONSUMERS": tuple(range(1, wgs + 1)),
            "CONSUMER_REGS": CONSUMER_REGS[wgs]}


def smem_bytes(hd: int, bn: int, stages: int, wgs: int = 2) -> int:
    """Q's tile, the K/V ring (2 tiles a stage), the barriers and 1 KB of alignment slack."""
    return 64 * wgs * hd * 2 + stages * 2 * bn * hd * 2 + 8 * (1 + 2 * stages) + 1024


def deepest_ring(hd: int, bn: int, most: int = 4) -> int:
    stages = most
    while stages > 2 and smem_bytes(hd, bn, stages) > SMEM_PER_BLOCK:
        stages -= 1
    return stages


def config_for(hd: int, causal: bool, sq: int, sk: int) -> dict:
    """BN = 128 keys a block (the S accumulator is 64 registers a thread, beside O's HD / 2)
    and the deepest ring that fits, capped at 3 stages: with DEFER (the kernel's default) a
    stage is held until the next block's S = Q K^T retires, so the consumers hold two stages
    while the producer fills the third (H100 sweep, 2026-12-06: d = 128 at 2 stages with DEFER
    0.71-0.78 of cuDNN, at 3 0.87-1.04; docs/perf-log.md). Shapes whose key sequence fits
    one or two blocks of 64 take BN = 64 (less masked work)."""
    del causal, sq
    bn = 64 if sk <= 64 else 128
    cfg = {"BN": bn, "S": min(deepest_ring(hd, bn), 3)}
    cfg.update(env_override())
    return cfg


def env_override() -> dict:
    """The knobs of ARGUS_ATTENTION_CONFIG (checked), {} when it is not set."""
    override = os.environ.get("ARGUS_ATTENTION_CONFIG")
    if not override:
        return {}
    try:
        knobs = json.loads(override)
    except ValueError as exc:
        raise LaunchError(f"ARGUS_ATTENTION_CONFIG is not JSON: {exc}") from None
    return check_knobs(knobs, "ARGUS_ATTENTION_CONFIG")


def check_knobs(knobs, where: str = "knobs") -> dict:
    """`knobs` when it is a dict of the kernel's knob names, else LaunchError naming them."""
    unknown = sorted(set(knobs) - set(KNOBS)) if isinstance(knobs, dict) else ["?"]
    if unknown:
        raise LaunchError(f"{where}: unknown knob(s) {', '.join(map(str, unknown))}; the kernel "
                          f"takes {', '.join(KNOBS)}")
    return dict(knobs)
