"""The configurations the library attention kernel admits for one problem: the planner's
space, and the exhaustive list a device run times.

The knob table (KNOB_VALUES) is what the kernel's constants could be set to; a
configuration is *accepted* when the static rules below admit it, and *buildable* when its
specialisation also compiles for sm_90a without spilling (the build probe: one NVRTC/nvcc
build, disk-cached, about a second). Each refusal is a sentence with the numbers.

Static rules (each found on the kernel and its builds, see tests/agent/attention/):
- WGS = 1 (one consumer warpgroup, 64-row query tiles) only for decode (SQ <= 64): above,
  every 64 rows read K and V again (measured 0.59-0.61 of cuDNN against 0.88 at 4096);
- BN is a power of two (32 ... 256): other accumulator widths (176, 192) generate C
  compound literals NVRTC rejects (docs/attention.md, "found, not fixed");
- shared memory: Q's tile and an S-stage K/V ring of BN x D tiles within the 227 KB a
  block may have (attention_configs.smem_bytes, the kernel's own layout);
- registers: a consumer thread holds S (BN/2 fp32), O (D/2), P (BN/4 packed pairs) and,
  with OVERLAP, a second S; an estimate over REGISTER_BOUND of the 240 it gets spills
  (ptxas measured: D=128 BN=128 OVERLAP=1 and D=64 BN=256 both spill).
The build probe refuses what ptxas says: a compile error, spilled bytes, serialised
wgmma (C7512/C7519/C7520), e.g. D=64 BN=128 OVERLAP=1 non-causal (52 B spilled; causal
does not spill).

Two configurations with one kernel are one: OVERLAP=1 masks every block whatever MASK says
(`canonical` sets MASK to "edge" there). The verifier is not a gate here: `argus check`
does not verify the production attention kernel yet (docs/design/verifier-attention.md;
every specialisation has error findings today), so on the GPU every candidate is checked
against torch SDPA on fresh inputs instead (evaluators.py).
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import replace

from argus.agent.attention.config import KNOB_NAMES, AttentionConfig
from argus.agent.attention.task import AttentionTask

KNOB_VALUES = {
    "BN": (32, 64, 128, 176, 192, 256),
    "S": (2, 3, 4),
    "SPLIT_KV": (0, 1),
    "MASK": ("edge", "all"),
    "FOLD_SCALE": (0, 1),
    "OVERLAP": (0, 1),
    "LPT": (0, 1),
    "WGS": (2, 1),
    "HEAD_GROUP": (1, 4, 8),
}
DECODE_ROWS = 64                  # query rows that one consumer warpgroup's tile holds
CONSUMER_REGISTERS = 240          # setmaxnreg of the consumer warpgroups (attention.py)
REGISTER_BOUND = 200              # the estimate above which a build spills (see the docstring)
LOG2E = 1.4426950408889634        # argus.ops.attention's, so the specialisation is the op's
BAD_DIAGNOSTICS = ("C7512", "C7519", "C7520")


def register_estimate(cfg: AttentionConfig, task: AttentionTask) -> int:
    """fp32/packed registers a consumer thread holds across the key loop (64 rows of a
    warpgroup over its 128 threads): S, O, P, and the second S of OVERLAP."""
    s_acc = cfg.BN // 2
    return s_acc * (2 if cfg.OVERLAP else 1) + task.d // 2 + cfg.BN // 4


def smem_bytes(cfg: AttentionConfig, task: AttentionTask) -> int:
    from argus.ops.attention_configs import smem_bytes as kernel_smem

    return kernel_smem(task.d, cfg.BN, cfg.S, cfg.WGS)


RULES = ("knob-table", "decode-tile", "head-group", "bn-power-of-two", "shared-memory",
         "registers")


def static_refusal(cfg: AttentionConfig, task: AttentionTask) -> str:
    """Why the kernel cannot take `cfg` for `task` by the static rules, or ""."""
    return static_rule(cfg, task)[1]


def static_rule(cfg: AttentionConfig, task: AttentionTask) -> tuple[str, str]:
    """(the rule of RULES that refuses `cfg`, its reason), or ("", "")."""
    from argus.limits import SMEM_PER_BLOCK, smem_fits_sm
    from argus.ops.attention_configs import head_group_refusal

    for name in KNOB_NAMES:
        if getattr(cfg, name) not in KNOB_VALUES[name]:
            return "knob-table", (f"{name}={getattr(cfg, name)!r} is not a value of the kernel's knob table "
                    f"({', '.join(map(repr, KNOB_VALUES[name]))})")
    per_sm = structural_knobs(task).get("BLOCKS_PER_SM", 1)
    if cfg.WGS == 1 and task.sq > DECODE_ROWS and per_sm == 1:
        return "decode-tile", (f"WGS=1 (64 query rows a block) is the decode tile: with "
                f"SQ={task.sq} > {DECODE_ROWS} every 64 rows read K and V again, twice the "
                f"traffic of WGS=2 for the same math (H100, 2026-12-06: 0.59-0.61 of cuDNN "
                f"against 0.88); use WGS=2")
    why = head_group_refusal({**structural_knobs(task), **cfg.to_json()}, task.layout,
                             task.b * task.hq)
    if why:
        return "head-group", why
    if cfg.BN & (cfg.BN - 1):
        return "bn-power-of-two", (f"BN={cfg.BN} is not a power of two: the generated code of that accumulator "
                f"width does not compile (NVRTC rejects its C compound literals; "
                f"docs/attention.md)")
    smem = smem_bytes(cfg, task)
    if per_sm > 1 and not smem_fits_sm(smem, per_sm):
        return "shared-memory", (f"shared memory {smem} B a block: the {per_sm} blocks an SM "
                f"of this shape class do not fit the SM; use fewer stages or a smaller BN")
    if smem > SMEM_PER_BLOCK:
        return "shared-memory", (f"shared memory {smem} B (Q {64 * cfg.WGS}x{task.d}, {cfg.S} stages of K and V "
                f"{cfg.BN}x{task.d}) is over the {SMEM_PER_BLOCK} B a block may have; "
                f"use fewer stages or a smaller BN")
    regs = register_estimate(cfg, task)
    if regs > REGISTER_BOUND:
        return "registers", (f"a consumer thread would hold about {regs} registers of accumulators "
                f"(S {cfg.BN // 2}{' x 2 with OVERLAP' if cfg.OVERLAP else ''}, O {task.d // 2}, "
                f"P {cfg.BN // 4}) of its {CONSUMER_REGISTERS}: ptxas spills there; use a "
                f"smaller BN{' or OVERLAP=0' if cfg.OVERLAP else ''}")
    return "", ""


def op_defaults(task: AttentionTask) -> dict:
    """The configuration argus.ops.attention gives the task's shape with no tuned entry
    (attention_configs.config_for of the rows it runs, its layout and head count)."""
    from argus.ops.attention_configs import config_for

    sq_run = min(task.sq, task.sk) if task.causal else task.sq
    return config_for(task.d, task.causal, sq_run, task.sk, task.layout, task.b * task.hq)


def structural_knobs(task: AttentionTask) -> dict:
    """The knobs argus.ops.attention fixes by the task's shape class and this space does not
    search (attention_configs.config_for: the persistent grid when not causal, two blocks an
    SM for causal d = 64, DEFER): every configuration here runs with them, as the op runs a
    tuned entry over them."""
    return {k: v for k, v in op_defaults(task).items() if k not in KNOB_NAMES}


def specialisation(cfg: AttentionConfig, task: AttentionTask) -> tuple:
    """(module, kernel, constants) that argus.ops.attention builds for `cfg`: the
    problem's constants (dtype, head dim, group, causal, the default scale), the shape
    class's structural knobs and every knob of `cfg`."""
    from argus.ops.attention_configs import roles

    knobs = {**structural_knobs(task), **cfg.to_json()}
    constants = {"DT": task.dtype, "HD": task.d, "G": task.group, "CAUSAL": int(task.causal),
                 "SCALE_LOG2": task.scale * LOG2E, **knobs,
                 **roles(knobs.get("WGS", 2), knobs.get("BLOCKS_PER_SM", 1))}
    return "attention", f"attention_{task.layout}", tuple(sorted(constants.items()))


def build_spec(spec: tuple) -> dict:
    """Build one specialisation (disk-cached) and judge ptxas's report:
    {"errors": [str], "spilled": bytes, "seconds": s}. Picklable for process pools."""
    start = time.perf_counter()
    errors: list[str] = []
    spilled = 0
    try:
        from argus.ops.library import generated
        from argus.runtime.build import BuildOptions, build_kernel

        module, name, constants = spec
        entry = build_kernel(generated(module, name, **dict(constants)).source, BuildOptions())
        for kernel in entry.resources.kernels.values():
            spilled += kernel.spill_store_bytes + kernel.spill_load_bytes
        if spilled:
            errors.append(f"ptxas spills {spilled} B of registers to local memory "
                          f"({name}): the consumer's accumulators do not fit")
        for diag in entry.resources.diagnostics:
            if getattr(diag, "code", "") in BAD_DIAGNOSTICS:
                errors.append(f"ptxas {diag.code}: {diag.message[:200]}")
    except Exception as err:          # a build failure is the refusal's reason
        errors.append(f"the build fails: {type(err).__name__}: {str(err)[:400]}")
    return {"errors": errors, "spilled": spilled, "seconds": time.perf_counter() - start}


def compiler_available() -> bool:
    try:
        from argus.runtime.build import BuildOptions, select_compiler

        select_compiler(BuildOptions())
    except Exception:
        return False
    return True


class AttentionSpace:
    """The library attention's configurations for a task. `build_check`: refuse what the
    build probe refuses (None: when a CUDA compiler is here); `builder(spec) -> dict` is
    build_spec unless given (tests pass a fake); builds are memoised per specialisation.
    `workers` > 1: prefetches build in a process pool of that many (spawned once, on first
    use, so a parent holding a CUDA context is never forked; `close` ends it)."""

    name = "library"

    def __init__(self, build_check: bool | None = None, builder=None, workers: int = 0):
        self.build_check = compiler_available() if build_check is None else build_check
        self.builder = builder or build_spec
        self.workers = workers
        self._builds: dict[tuple, dict] = {}
        self._pool = None

    # -- the static rules ----------------------------------------------------------------
    def refusal(self, cfg: AttentionConfig, task: AttentionTask) -> str:
        return static_refusal(cfg, task)

    def accepts(self, cfg: AttentionConfig, task: AttentionTask) -> bool:
        return not self.refusal(cfg, task)

    def canonical(self, cfg: AttentionConfig, task: AttentionTask) -> AttentionConfig:
        """One configuration per kernel: OVERLAP=1 masks every block, so MASK is "edge"."""
        return replace(cfg, MASK="edge") if cfg.OVERLAP else cfg

    def values(self, task: AttentionTask) -> dict[str, tuple]:
        """Each knob's admissible values: those some accepted configuration has."""
        seen: dict[str, set] = {n: set() for n in KNOB_NAMES}
        for cfg in self.all_accepted(task):
            for n in KNOB_NAMES:
                seen[n].add(getattr(cfg, n))
        return {n: tuple(v for v in KNOB_VALUES[n] if v in seen[n]) for n in KNOB_NAMES}

    def all_accepted(self, task: AttentionTask):
        """Every statically accepted canonical configuration, in the knob table's order."""
        keys = set()
        for combo in itertools.product(*(KNOB_VALUES[n] for n in KNOB_NAMES)):
            cfg = AttentionConfig(**dict(zip(KNOB_NAMES, combo)))
            if self.accepts(cfg, task):
                cfg = self.canonical(cfg, task)
                if cfg.key() not in keys:
                    keys.add(cfg.key())
                    yield cfg

    def refusals(self, task: AttentionTask) -> dict[str, int]:
        """{rule: configurations of the whole knob table it refuses} (reports)."""
        counts: dict[str, int] = {}
        for combo in itertools.product(*(KNOB_VALUES[n] for n in KNOB_NAMES)):
            rule, _ = static_rule(AttentionConfig(**dict(zip(KNOB_NAMES, combo))), task)
            if rule:
                counts[rule] = counts.get(rule, 0) + 1
        return counts

    # -- the build probe -----------------------------------------------------------------
    def build_errors(self, cfg: AttentionConfig, task: AttentionTask) -> list[str]:
        if not self.build_check:
            return []
        spec = specialisation(cfg, task)
        if spec not in self._builds:
            self._builds[spec] = self.builder(spec)
        return list(self._builds[spec]["errors"])

    def known_unbuildable(self, cfg: AttentionConfig, task: AttentionTask) -> bool:
        """Whether the build probe already refused `cfg` (no build started here)."""
        answer = self._builds.get(specialisation(cfg, task)) if self.build_check else None
        return bool(answer and answer["errors"])

    def prefetch(self, configs, task: AttentionTask, log=None) -> float:
        """Build these configurations' kernels side by side (a process pool of `workers`);
        the seconds it took."""
        start = time.perf_counter()
        if not self.build_check:
            return 0.0
        specs = [s for s in dict.fromkeys(specialisation(c, task) for c in configs)
                 if s not in self._builds]
        if not specs:
            return 0.0
        if self.workers > 1 and self.builder is build_spec and len(specs) > 1:
            for spec, answer in zip(specs, self._executor().map(build_spec, specs)):
                self._builds[spec] = answer
        else:
            for spec in specs:
                self._builds[spec] = self.builder(spec)
        if log:
            bad = sum(bool(self._builds[s]["errors"]) for s in specs)
            log(f"built {len(specs)} attention specialisations in "
                f"{time.perf_counter() - start:.1f} s ({bad} refused by the build)")
        return time.perf_counter() - start

    def _executor(self):
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(self.workers,
                                             mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def why_invalid(self, cfg: AttentionConfig, task: AttentionTask) -> tuple[str, list[str]]:
        """("refused", [reason]) / ("unbuildable", [ptxas's]) / ("", [])."""
        why = self.refusal(cfg, task)
        if why:
            return "refused", [why]
        errors = self.build_errors(cfg, task)
        return ("unbuildable", errors) if errors else ("", [])

    def valid(self, cfg: AttentionConfig, task: AttentionTask) -> bool:
        return not self.why_invalid(cfg, task)[0]

    def all_valid(self, task: AttentionTask) -> list[AttentionConfig]:
        accepted = list(self.all_accepted(task))
        self.prefetch(accepted, task)
        return [c for c in accepted if not self.build_errors(c, task)]

    # -- named configurations ------------------------------------------------------------
    def library_default(self, task: AttentionTask) -> AttentionConfig:
        """What argus.ops.attention runs for the task with no tuned entry (config_for over
        the kernel module's defaults)."""
        searched = {k: v for k, v in op_defaults(task).items()
                    if k in KNOB_NAMES}                                   # the rest: structural
        return self.canonical(AttentionConfig(**{**AttentionConfig().to_json(), **searched}),
                              task)


def describe_space(space: AttentionSpace, task: AttentionTask) -> dict:
    accepted = list(space.all_accepted(task))
    return {"values": {k: list(v) for k, v in space.values(task).items()},
            "accepted": len(accepted), "refused_by": space.refusals(task),
            "table_size": math.prod(len(v) for v in KNOB_VALUES.values())}
