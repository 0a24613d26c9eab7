"""Static resource and legality checks of a GEMM configuration on sm_90 (H100/H200).

Each failed check is a `Violation` with a concrete counterexample (the numbers that break
the limit), shaped like the verifier's findings (argus/verify/finding.py: check, message,
hint, counterexample) so the planner feeds both back the same way. The limits are
argus.limits (the CUDA programming guide's compute-capability-9.0 table).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from argus.agent.gemm_config import GemmConfig
from argus.agent.task import GemmTask
from argus.limits import (MAX_BLOCKS_PER_SM, MAX_CLUSTER_SIZE, MAX_REGISTERS_PER_THREAD,
                          MAX_THREADS_PER_BLOCK, MAX_THREADS_PER_SM, REGISTERS_PER_SM,
                          SMEM_PER_BLOCK, SMEM_PER_SM, SMEM_RESERVED_PER_BLOCK)

PRODUCER_REGS = 40                  # setmaxnreg.dec of the producer warpgroup (ThunderKittens)
REG_OVERHEAD = 32                   # addresses, loop counters, descriptors per consumer thread


@dataclass(frozen=True)
class Violation:
    check: str
    message: str
    hint: str
    counterexample: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "severity": "error", "message": self.message,
                "hint": self.hint, "counterexample": dict(self.counterexample)}

    def __str__(self) -> str:
        return f"[{self.check}] {self.message}; hint: {self.hint}"


def _round8(x: int) -> int:
    return (x + 7) // 8 * 8


def smem_bytes(cfg: GemmConfig, task: GemmTask) -> int:
    """Ring (A and B stage buffers) + epilogue staging + mbarriers (full/empty per stage).

    The TMA-store epilogue stages C in double-buffered subtiles of BM x 64 (CUTLASS's
    epilogue tile), not the whole BM x BN tile."""
    e = task.element_bytes
    ring = cfg.stages * (cfg.BM * cfg.BK + cfg.BN * cfg.BK) * e
    epilogue = 2 * cfg.BM * min(cfg.BN, 64) * 2 if cfg.epilogue != "direct" else 0
    barriers = 2 * 8 * cfg.stages
    return ring + epilogue + barriers


def consumer_registers(cfg: GemmConfig) -> int:
    """Registers one consumer thread needs: its fp32 accumulator slice plus overhead."""
    rows = cfg.BM // max(cfg.consumers, 1)
    return _round8(rows * cfg.BN // 128 + REG_OVERHEAD)


def block_registers(cfg: GemmConfig) -> int:
    need = consumer_registers(cfg)
    if cfg.warp_specialized:
        return 128 * (PRODUCER_REGS + cfg.consumers * need)
    return 128 * cfg.consumers * need


def occupancy(cfg: GemmConfig, task: GemmTask) -> int:
    """Resident CTAs per SM allowed by shared memory, registers, threads and the block cap."""
    by_smem = SMEM_PER_SM // (smem_bytes(cfg, task) + SMEM_RESERVED_PER_BLOCK)
    by_regs = REGISTERS_PER_SM // max(block_registers(cfg), 1)
    by_threads = MAX_THREADS_PER_SM // cfg.threads()
    return max(0, min(by_smem, by_regs, by_threads, MAX_BLOCKS_PER_SM))


def check_resources(cfg: GemmConfig, task: GemmTask) -> list[Violation]:
    """Every violated limit or legality rule; empty when the configuration can launch."""
    out: list[Violation] = []
    rows = cfg.BM // cfg.consumers if cfg.BM % cfg.consumers == 0 else None
    if rows is None or rows % 64:
        out.append(Violation(
            "wgmma.rows", f"BM={cfg.BM} over {cfg.consumers} consumer warpgroups gives "
            f"{cfg.BM / cfg.consumers:g} rows each; a wgmma covers 64 rows per warpgroup",
            "make BM a multiple of 64 x consumers (e.g. BM=128 with 2 consumers)",
            {"BM": cfg.BM, "consumers": cfg.consumers, "rows_per_consumer": cfg.BM / cfg.consumers}))
    if cfg.BN % 16 or cfg.BN > 256:
        out.append(Violation("wgmma.n", f"BN={cfg.BN}: wgmma N must be a multiple of 16 up to 256",
                             "pick BN in 16..256, a multiple of 16", {"BN": cfg.BN}))
    smem = smem_bytes(cfg, task)
    if smem > SMEM_PER_BLOCK:
        e = task.element_bytes
        out.append(Violation(
            "resource.smem",
            f"shared memory {smem} B > {SMEM_PER_BLOCK} B ({SMEM_PER_BLOCK // 1024} KB): "
            f"{cfg.stages} stages x ({cfg.BM}x{cfg.BK} + {cfg.BN}x{cfg.BK}) x {e} B"
            + (f" + 2x{cfg.BM}x{min(cfg.BN, 64)}x2 B epilogue staging"
               if cfg.epilogue != "direct" else ""),
            "fewer stages, a smaller BK, or a smaller tile",
            {"smem_bytes": smem, "limit_bytes": SMEM_PER_BLOCK, "stages": cfg.stages,
             "stage_bytes": (cfg.BM * cfg.BK + cfg.BN * cfg.BK) * e}))
    need = consumer_registers(cfg)
    if need > MAX_REGISTERS_PER_THREAD:
        out.append(Violation(
            "resource.registers", f"each consumer thread needs {need} registers "
            f"({cfg.BM // max(cfg.consumers, 1)}x{cfg.BN} fp32 accumulator / 128 threads + "
            f"{REG_OVERHEAD}) > {MAX_REGISTERS_PER_THREAD}",
            "more consumer warpgroups for the same BM, or a smaller BM/BN",
            {"registers_per_thread": need, "limit": MAX_REGISTERS_PER_THREAD}))
    elif block_registers(cfg) > REGISTERS_PER_SM:
        out.append(Violation(
            "resource.registers", f"the block needs {block_registers(cfg)} registers "
            f"> {REGISTERS_PER_SM} per SM", "fewer consumer warpgroups or a smaller tile",
            {"block_registers": block_registers(cfg), "limit": REGISTERS_PER_SM}))
    if cfg.threads() > MAX_THREADS_PER_BLOCK:
        out.append(Violation("resource.threads", f"{cfg.threads()} threads > {MAX_THREADS_PER_BLOCK}",
                             "fewer warpgroups", {"threads": cfg.threads()}))
    for dim, size, tile in (("M", task.M, cfg.BM), ("N", task.N, cfg.BN)):
        if size % tile:
            last = size // tile * tile
            out.append(Violation(
                "tile.divisibility", f"{dim}={size} is not a multiple of B{dim}={tile}: the last "
                f"tile starts at {dim.lower()}={last} and would cover up to {last + tile - 1}",
                f"pick B{dim} dividing {size}", {"sizes": {dim: size}, f"B{dim}": tile,
                                                  "remainder": size % tile}))
    k_span = cfg.BK * cfg.split_k
    if task.K % k_span:
        out.append(Violation(
            "tile.divisibility", f"K={task.K} is not a multiple of BK x split_k = "
            f"{cfg.BK}x{cfg.split_k} = {k_span}", "pick BK and split_k whose product divides K",
            {"sizes": {"K": task.K}, "BK": cfg.BK, "split_k": cfg.split_k,
             "remainder": task.K % k_span}))
    cluster = cfg.cluster_m * cfg.cluster_n
    if cluster > MAX_CLUSTER_SIZE:
        out.append(Violation("cluster.size", f"cluster {cfg.cluster_m}x{cfg.cluster_n} = {cluster} "
                             f"CTAs > {MAX_CLUSTER_SIZE} (portable limit)",
                             f"a cluster of at most {MAX_CLUSTER_SIZE} CTAs",
                             {"cluster": [cfg.cluster_m, cfg.cluster_n]}))
    tiles_m, tiles_n = -(-task.M // cfg.BM), -(-task.N // cfg.BN)
    if tiles_m % cfg.cluster_m or tiles_n % cfg.cluster_n:
        out.append(Violation(
            "cluster.divisibility", f"the {tiles_m}x{tiles_n} tile grid does not divide into "
            f"{cfg.cluster_m}x{cfg.cluster_n} clusters", "a cluster shape dividing the tile grid",
            {"tiles": [tiles_m, tiles_n], "cluster": [cfg.cluster_m, cfg.cluster_n]}))
    if not out and occupancy(cfg, task) < 1:
        out.append(Violation("resource.occupancy", "no CTA of this configuration fits on an SM",
                             "a smaller tile or fewer stages", {"occupancy": 0}))
    return out


def resource_summary(cfg: GemmConfig, task: GemmTask) -> dict[str, Any]:
    return {"smem_bytes": smem_bytes(cfg, task), "smem_limit_bytes": SMEM_PER_BLOCK,
            "registers_per_consumer_thread": consumer_registers(cfg),
            "block_registers": block_registers(cfg), "threads": cfg.threads(),
            "occupancy_ctas_per_sm": occupancy(cfg, task)}
