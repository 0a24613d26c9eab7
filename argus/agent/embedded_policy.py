"""The embedded default planner: a knowledge-guided bandit over the GEMM schedule knobs.

No model, no network, deterministic. Each step it builds candidates from the current best
configuration: every `move` of every retrieved technique (knowledge/techniques/*.toml),
repaired to fit (fewer stages when shared memory overflows, more consumers when the
accumulator overflows the registers), and every one-knob neighbour (local search). It
prunes the ones the resource checks reject or that were already evaluated, then ranks the
rest by
    log(cost-model gain over the best)  +  BETA x UCB(technique)
where UCB is the mean log-reward of the technique's earlier steps plus an exploration term.
On a CPU the evaluator is the cost model itself, so this is a model-guided hill climb; on a
GPU the cost model is only the prior and measured rewards steer the bandit.

With a space in the context (the GPU evaluator of the library GEMM: library_space.py) the
moves, neighbours and repairs use only the values the library accepts, candidates are
reduced to one configuration per kernel (`canonical`), and the proposal is the best-ranked
candidate the verifier proves (a rejected one is skipped, never evaluated); a library kernel
value only failed configurations have (e.g. a variant broken on this GPU) is ranked down
per failure and dropped after two failures (or one hang).
Without one
(the CPU cost model) the whole knob table is searched.
The whole state is the trajectory in the context: a resumed run proposes the same thing.
"""
from __future__ import annotations

import math
from dataclasses import replace

from argus.agent import resources as R
from argus.agent.context import PlannerContext
from argus.agent.cost_model import predict
from argus.agent.gemm_config import KNOB_BY_NAME, KNOBS, GemmConfig, parse_config
from argus.agent.knowledge import load_knowledge
from argus.agent.task import GemmTask

BETA, EXPLORE = 0.5, 0.3
DEPTH2_WIDTH = 6          # best single-move candidates expanded by a second move
FALLBACK_BASES = 8        # next-best configurations to search around once the best is exhausted
PREFETCH = 8              # candidates whose kernels are verified at once (with verifier workers)
FAIL_PENALTY = 1.0        # score (log-gain units) lost per failure of a suspect knob value
GIVE_UP = 2               # failures after which a suspect knob value is not proposed


def _admissible(name: str, values: dict | None) -> tuple:
    return values[name] if values is not None else KNOB_BY_NAME[name].values


def apply_move(cfg: GemmConfig, move: dict, admissible: dict | None = None) -> GemmConfig | None:
    """`cfg` moved by a technique's move ("+1", "*2", a value); None when a value leaves
    the admissible values (the knob table's, or a space's `admissible`)."""
    values = {}
    for name, value in move.items():
        current = getattr(cfg, name)
        if isinstance(value, str) and value[:1] in "+-*/" and value[1:].isdigit():
            amount = int(value[1:])
            value = {"+": current + amount, "-": current - amount, "*": current * amount,
                     "/": current // amount if amount else current}[value[0]]
        if value not in _admissible(name, admissible):
            return None
        values[name] = value
    return replace(cfg, **values)


def repair(cfg: GemmConfig, task: GemmTask, space=None) -> GemmConfig:
    """Nudge a configuration into the limits the way an engineer would (with a space, also
    into what the library accepts: fewer stages when its shared memory overflows)."""
    if cfg.BM % (64 * cfg.consumers):
        fits = [c for c in (3, 2, 1) if cfg.BM % (64 * c) == 0]
        cfg = replace(cfg, consumers=fits[0])
    while R.consumer_registers(cfg) > R.MAX_REGISTERS_PER_THREAD and cfg.consumers < 3 \
            and cfg.BM % (64 * (cfg.consumers + 1)) == 0:
        cfg = replace(cfg, consumers=cfg.consumers + 1)
    while R.smem_bytes(cfg, task) > R.SMEM_PER_BLOCK and cfg.stages > 2:
        cfg = replace(cfg, stages=cfg.stages - 1)
    tiles_m, tiles_n = -(-task.M // cfg.BM), -(-task.N // cfg.BN)
    if tiles_m % cfg.cluster_m or tiles_n % cfg.cluster_n:
        cfg = replace(cfg, cluster_m=1, cluster_n=1)
    if task.K % (cfg.BK * cfg.split_k):
        cfg = replace(cfg, split_k=1)
    if space is not None:
        rings = space.values(task)["stages"]
        while not space.accepts(cfg, task) and cfg.stages > rings[0]:
            cfg = replace(cfg, stages=max(s for s in rings if s < cfg.stages))
    return cfg


def neighbours(cfg: GemmConfig, task: GemmTask, space=None) -> list[tuple[str, GemmConfig]]:
    """The next admissible value up and down of each knob; tile sizes skip to the next
    value that divides the problem (BN 64 -> 128 on N=4096, not 80)."""
    out = []
    dims = {"BM": task.M, "BN": task.N}
    admissible = space.values(task) if space is not None else None
    for knob in KNOBS:
        values = _admissible(knob.name, admissible)
        if getattr(cfg, knob.name) not in values:
            continue
        if knob.name in dims:
            values = tuple(v for v in values if dims[knob.name] % v == 0 or v == getattr(cfg, knob.name))
        i = values.index(getattr(cfg, knob.name))
        for j in (i + 1, i - 1):
            if 0 <= j < len(values):
                moved = repair(replace(cfg, **{knob.name: values[j]}), task, space)
                out.append((f"local-search:{knob.name}", moved))
    return out


def _ucb(technique: str, ctx: PlannerContext) -> float:
    steps = [s for s in ctx.trajectory.steps if s.technique == technique and not s.repeated]
    total = max(1, len([s for s in ctx.trajectory.steps if not s.repeated]))
    if not steps:
        return EXPLORE * math.sqrt(math.log(total + 1))
    mean = sum(math.log(max(s.reward, 0.5)) for s in steps) / len(steps)
    return mean + EXPLORE * math.sqrt(math.log(total + 1) / len(steps))


def expand(cfg: GemmConfig, ctx: PlannerContext) -> list[tuple[str, GemmConfig, list[str]]]:
    """One move away from `cfg`: every technique move (repaired) and every neighbour."""
    task, space = ctx.task, ctx.space
    admissible = space.values(task) if space is not None else None
    techniques = {t.id: t for t in ctx.knowledge}
    techniques.update({t.id: t for t in load_knowledge() if task.op in t.ops and t.moves})
    out = []
    for t in techniques.values():
        for move in t.moves:
            moved = apply_move(cfg, move, admissible)
            if moved is not None:
                out.append((t.id, repair(moved, task, space), list(t.invariants[:2])))
    return out + [(name, c, []) for name, c in neighbours(cfg, task, space)]


def candidates(ctx: PlannerContext, around: GemmConfig | None = None
               ) -> list[tuple[float, str, GemmConfig, list[str]]]:
    """Unexplored valid configurations one or two moves from the best (or from `around`),
    ranked; gains are always relative to the best."""
    task, best, space = ctx.task, ctx.best_config(), ctx.space
    origin = around or best
    base = predict(best, task)["tflops"] if not R.check_resources(best, task) else None
    seen = {_kernel_key(s.config, task, space) for s in ctx.trajectory.steps
            if s.config is not None}
    failures, given_up = _suspect_values(ctx)
    bonus: dict[str, float] = {}

    def score(pool):
        ranked = []
        for technique, cfg, invariants in pool:
            if space is not None:
                if not space.accepts(cfg, task):
                    continue
                cfg = space.canonical(cfg, task)
            if cfg.key() in seen or R.check_resources(cfg, task):
                continue
            seen.add(cfg.key())
            gain = predict(cfg, task)["tflops"] / base if base else 1.0
            family = technique.split("+")[0]
            family = "local-search" if family.startswith("local-search") else family
            if family not in bonus:
                bonus[family] = _ucb(family, ctx)
            values = cfg.to_json().items()
            if any(kv in given_up for kv in values):
                continue
            penalty = FAIL_PENALTY * max((failures.get(kv, 0) for kv in values), default=0)
            ranked.append((math.log(max(gain, 1e-6)) + BETA * bonus[family] - penalty,
                           technique, cfg, invariants))
        return ranked

    lessons = []
    for lesson in ctx.lessons:
        try:
            lessons.append((f"lesson:{lesson['shape']}", parse_config(lesson["config"]), []))
        except Exception:
            continue
    first = score(lessons + expand(origin, ctx))
    first.sort(key=lambda r: (-r[0], r[1], r[2].key()))
    second = []
    for _, technique, cfg, invariants in first[:DEPTH2_WIDTH]:
        second += score([(f"{technique}+{t2}", c2, invariants + inv2)
                         for t2, c2, inv2 in expand(cfg, ctx)])
    ranked = first + second
    ranked.sort(key=lambda r: (-r[0], r[1], r[2].key()))
    return ranked


def _suspect_values(ctx: PlannerContext) -> tuple[dict, set]:
    """({(knob, value): failures}, given up) from the measurements so far. A failed
    configuration (wrong results, a crash, a hang) makes suspect each of its knob values
    that no successful configuration has (e.g. epilogue="smem_tma" when that variant is
    broken on this GPU); a candidate is ranked down by FAIL_PENALTY per failure of its most
    suspect value, and dropped once a value has GIVE_UP failures (a hang counts GIVE_UP),
    so a broken variant is not proposed again and again and the search widens elsewhere."""
    steps = [s for s in ctx.trajectory.steps if s.config is not None and not s.repeated
             and s.outcome.status != "unmeasured"]
    worked = {kv for s in steps if s.outcome.ok for kv in s.config.to_json().items()}
    failures: dict = {}
    for s in steps:
        if s.outcome.ok:
            continue
        hung = (s.outcome.details.get("benchmark") or {}).get("status") == "timeout"
        for kv in s.config.to_json().items():
            if kv not in worked:
                failures[kv] = failures.get(kv, 0) + (GIVE_UP if hung else 1)
    return failures, {kv for kv, n in failures.items() if n >= GIVE_UP}


def _kernel_key(cfg: GemmConfig, task: GemmTask, space) -> tuple:
    """What makes two configurations the same evaluation: the kernel, with a space."""
    if space is not None and space.accepts(cfg, task):
        return space.canonical(cfg, task).key()
    return cfg.key()


def _first_verified(ranked: list, ctx: PlannerContext) -> tuple[tuple | None, int]:
    """(the best-ranked candidate the verifier proves, how many were skipped for errors);
    without a space every candidate counts as proved."""
    space = ctx.space
    if space is None:
        return (ranked[0] if ranked else None), 0
    skipped = 0
    for i, entry in enumerate(ranked):
        if i % PREFETCH == 0:
            space.prefetch([r[2] for r in ranked[i:i + PREFETCH]], ctx.task)
        if not space.verifier_errors(entry[2], ctx.task):
            return entry, skipped
        skipped += 1
    return None, skipped


def propose(ctx: PlannerContext) -> dict:
    """The reply an LLM would give, as a dict: technique, config, invariants, rationale.

    When everything near the best was tried, the search widens around the next-best
    evaluated configurations (up to FALLBACK_BASES of them) before it gives up."""
    ranked = candidates(ctx)
    chosen, skipped = _first_verified(ranked, ctx)
    ok = sorted((s for s in ctx.trajectory.steps if s.outcome.ok and s.config is not None),
                key=lambda s: (-s.outcome.tflops, s.index))
    for step in ok[1:1 + FALLBACK_BASES]:
        if chosen is not None:
            break
        ranked = candidates(ctx, around=step.config)
        chosen, more = _first_verified(ranked, ctx)
        skipped += more
    if chosen is None:
        what = "the resource checks" + (", the library and the verifier"
                                         if ctx.space is not None else "")
        return {"stop": True, "rationale": f"no unexplored configuration passes {what}"}
    score, technique, cfg, invariants = chosen
    proved = (f"; {skipped} better-ranked ones skipped: the verifier rejects their kernels"
              if skipped else "")
    return {"technique": technique, "config": cfg.to_json(), "invariants": invariants,
            "rationale": f"highest score {score:.3f} among {len(ranked)} unexplored candidates "
                         f"(cost-model gain + bandit bonus){proved}"}
