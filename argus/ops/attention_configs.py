"""Which attention configuration each shape class gets: the module constants of
argus/kernels/attention.py other than the problem's own (dtype, head dim, GQA group,
causal, scale). ARGUS_ATTENTION_CONFIG='{"BN": 64, "S": 3}' overrides them (the knob sweep
of scripts/device_attention.sh compares variants so); argus.ops.attention puts a tuned
cache entry (attention_tuned.py) over the shape's defaults where the variable is not set,
and a call's explicit knobs (attention_into(..., knobs=)) over everything."""

from __future__ import annotations

import json
import os

from argus.limits import (REGISTER_GRANULE, SETMAXNREG_MIN, SM_COUNT, SMEM_BASE_ALIGN,
                          SMEM_PER_BLOCK, WARPGROUP_THREADS, registers_at_entry, smem_fits_sm)
from argus.runtime.launch_errors import LaunchError

HEAD_DIMS = (64, 128)
KEY_BLOCKS = (64, 128)            # BN
KNOBS = ("BN", "S", "SPLIT_KV", "MASK", "OVERLAP", "LPT", "HEAD_GROUP", "FOLD_SCALE",
         "PINGPONG", "DEFER", "WGS", "BLOCKS_PER_SM", "PERSIST", "BLOCKS",
         "EXP2_POLY")                                        # attention.py's constants
PRODUCER_REGS = 24                # the producer's setmaxnreg (the TMA thread needs no more)
CONSUMER_REGS_MOST = 240          # what a consumer can use (spill-free at d = 128, WGS = 2)


def roles(wgs: int, blocks_per_sm: int = 1) -> dict:
    """The constants that follow from the number of consumer warpgroups and of blocks an
    SM holds: the consumers' indices and their setmaxnreg, the block's register pool
    (registers at launch times its threads, the file split among blocks_per_sm blocks) less
    the producer's, shared among them (WGS = 2: 240; 3: 160; 1 with two blocks an SM: 232)."""
    if wgs not in (1, 2, 3):
        raise LaunchError(f"WGS = {wgs!r}: the attention kernel takes 1, 2 or 3 consumer "
                          "warpgroups")
    if blocks_per_sm not in (1, 2):
        raise LaunchError(f"BLOCKS_PER_SM = {blocks_per_sm!r}: the attention kernel runs one "
                          "or two blocks an SM")
    pool = registers_at_entry(WARPGROUP_THREADS * (1 + wgs), blocks_per_sm) * (1 + wgs)
    regs = min(CONSUMER_REGS_MOST, (pool - PRODUCER_REGS) // wgs
               // REGISTER_GRANULE * REGISTER_GRANULE)
    if regs < SETMAXNREG_MIN:
        raise LaunchError(f"WGS = {wgs} with BLOCKS_PER_SM = {blocks_per_sm} leaves the "
                          f"consumers {regs} registers a thread")
    return {"WGS": wgs, "BLOCKS_PER_SM": blocks_per_sm, "CONSUMERS": tuple(range(1, wgs + 1)),
            "CONSUMER_REGS": regs, "PRODUCER_REGS": PRODUCER_REGS}


def smem_bytes(hd: int, bn: int, stages: int, wgs: int = 2) -> int:
    """Q's tile, the K/V ring (2 tiles a stage), the barriers and the alignment slack."""
    return 64 * wgs * hd * 2 + stages * 2 * bn * hd * 2 + 8 * (1 + 2 * stages) + SMEM_BASE_ALIGN


def check_fits(cfg: dict, hd: int, causal: bool = False) -> None:
    """LaunchError unless the configuration's blocks fit the SM's shared memory and its
    knobs go together (PINGPONG takes turns between two consumer warpgroups; PERSIST carries
    the ring's positions from tile to tile, which OVERLAP's loop, counting them from 0, does
    not)."""
    wgs, bps = cfg.get("WGS", 2), cfg.get("BLOCKS_PER_SM", 1)
    need = smem_bytes(hd, cfg["BN"], cfg["S"], wgs)
    if need > SMEM_PER_BLOCK or not smem_fits_sm(need, bps):
        raise LaunchError(f"attention with HD = {hd}, BN = {cfg['BN']}, S = {cfg['S']}, "
                          f"WGS = {wgs} needs {need} B of shared memory a block: "
                          f"{bps} such block(s) do not fit an SM; use fewer stages (S), a "
                          "smaller BN, or BLOCKS_PER_SM = 1")
    if cfg.get("PINGPONG", 0) and wgs < 2:
        raise LaunchError("PINGPONG takes turns between two consumer warpgroups: it needs "
                          "WGS >= 2")
    if cfg.get("PERSIST", 0) and cfg.get("OVERLAP", 0):
        raise LaunchError("PERSIST carries the K/V ring's position from tile to tile and "
                          "OVERLAP's key loop counts it from 0 in every tile: use one of them")


def head_group_refusal(cfg: dict, layout: str, heads: int) -> str:
    """Why the configuration's HEAD_GROUP cannot run on a problem of this layout and head
    count (B * HQ), or "" when it can: the op raises it, the agent's space refuses by it.
    g heads' query blocks interleave on grid x of the grid of one tile a block (the
    persistent grid walks the tiles in its own order), in bhsd (bshd's batch holds grid z),
    the heads in whole groups."""
    group = cfg.get("HEAD_GROUP", 1)
    if group == 1:
        return ""
    if isinstance(group, bool) or not isinstance(group, int) or group < 1:
        return f"HEAD_GROUP = {group!r} is not a positive int"
    if layout != "bhsd" or cfg.get("PERSIST", 0) or heads % group:
        return (f"HEAD_GROUP = {group} interleaves that many heads' query blocks on grid x: "
                f"the bhsd layout only, with one tile a block (not the persistent grid), and "
                f"the {heads} heads (B * HQ) a multiple of it (here layout {layout!r}"
                f"{', PERSIST' if cfg.get('PERSIST', 0) else ''}); use a divisor of the head "
                "count, or 1")
    return ""


def deepest_ring(hd: int, bn: int, most: int = 4) -> int:
    stages = most
    while stages > 2 and smem_bytes(hd, bn, stages) > SMEM_PER_BLOCK:
        stages -= 1
    return stages


def config_for(hd: int, causal: bool, sq: int, sk: int, layout: str | None = None,
               heads: int | None = None) -> dict:
    """BN = 128 keys a block (the S accumulator is 64 registers a thread, beside O's HD / 2)
    and the deepest ring that fits, capped at 3 stages: with DEFER (the kernel's default) a
    stage is held until the next block's S = Q K^T retires, so the consumers hold two stages
    while the producer fills the third (H100 sweep, 2026-12-06: d = 128 at 2 stages with DEFER
    0.71-0.78 of cuDNN, at 3 0.87-1.04; docs/perf-log.md). Shapes whose key sequence fits
    one or two blocks of 64 take BN = 64 (less masked work).

    When every query row fits one 64-row tile (SQ <= 64: decode), a block of two consumer
    warpgroups is at least half padding rows whose GEMMs are wasted; one consumer warpgroup
    (WGS = 1, 64-row blocks) reads the same K and V once and does half the math (H100,
    2026-12-06: 16 x 32/8 heads x 16 x 4096 x 128 0.918 -> 1.164 of cuDNN).

    Not causal: a persistent grid (PERSIST; one block an SM walks the tiles, loading a
    tile's Q and first K/V under the previous tile's epilogue): H100, 2026-12-06, +11% at
    d = 64 SK = 1024, +14-27% on short sequences (272-443 keys), +0-3% on long ones. Causal
    (where every tile visits its own number of key blocks, which PERSIST cannot count) at
    d = 64: two blocks an SM, one consumer warpgroup each, without DEFER on a two-stage ring
    (+4% at 2048, +15% at 453 keys).

    Causal, with the `layout` and the head count `heads` (B * HQ) given (the op and the
    agent's space give them): `launch_order`'s LPT and HEAD_GROUP where they apply."""
    bn = 64 if sk <= 64 else 128
    cfg = {"BN": bn, "S": min(deepest_ring(hd, bn), 3)}
    if sq <= 64:
        cfg["WGS"] = 1
    if not causal:
        cfg["PERSIST"] = 1
    elif hd == 64 and sq > 64:
        cfg.update({"WGS": 1, "BLOCKS_PER_SM": 2, "DEFER": 0, "S": 2})
    if causal and layout is not None and heads is not None:
        cfg.update(launch_order(cfg, layout, heads, sq))
    cfg.update(env_override())
    return cfg


GROUPED_HEADS = 8        # the heads whose query blocks the causal default interleaves
GROUPED_MAX_WAVES = 64   # ... on a grid of at most this many waves of resident blocks


def launch_order(cfg: dict, layout: str, heads: int, sq: int) -> dict:
    """The causal launch order of a shape (bhsd, one tile a block): {"LPT": 1, "HEAD_GROUP":
    8}, the longest query blocks of 8 heads first, then the next longest of the same heads,
    so the grid's last wave is short (a list schedule) while the blocks running at once read
    8 heads' K and V from L2. Measured on an H100 (2026-12-07, benchmarks/results/
    attention-sweep-lpt*-20261207-s22-h100.json), time against the forward order: 8 x 16 x
    2048 d = 64 -2.8 / -2.7% (two runs), 4 x 16 x 4096 d = 128 -3.7%, 4 x 32/8 x 4096 -3.7 /
    -0.8%, 1 x 16 x 16384 -7.9%, grids of 15-31 waves; 16 x 64/8 x 2756 d = 64 (171 waves,
    whose last wave is a sliver anyway) +2.0%: so grids of up to GROUPED_MAX_WAVES waves
    only. {} where it does not apply (bshd, the persistent grid, a head count B * HQ that 8
    does not divide)."""
    if layout != "bhsd" or cfg.get("PERSIST", 0) or heads % GROUPED_HEADS:
        return {}
    rows = 64 * cfg.get("WGS", 2)
    blocks = heads * -(-sq // rows)
    waves = blocks / (SM_COUNT * cfg.get("BLOCKS_PER_SM", 1))
    return {"LPT": 1, "HEAD_GROUP": GROUPED_HEADS} if waves <= GROUPED_MAX_WAVES else {}


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
