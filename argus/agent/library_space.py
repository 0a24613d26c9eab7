"""The schedules the library DSL GEMM can run: the embedded planner's space on a GPU.

The planner's knob table (gemm_config.KNOBS) is wider than the DSL GEMM: clusters, BM other
than 128, one consumer, raster "n" are modelled by the cost model but not built by
argus/kernels/gemm*.py. On the GPU every proposal must be something argus.ops.matmul runs,
so no evaluation is spent on a refusal. Everything here is derived at use from
argus/ops/gemm_configs.py (`knobs_to_config`, which owns FIXED_KNOBS, SPLITS, EPILOGUES, the
BN/BK rules and the shared-memory limit), never copied, so a knob the library learns
(e.g. cluster_m=2) enters the space by itself:

- a knob value is *admissible* when `knobs_to_config` accepts it with a one-stage ring (so
  the shared-memory limit is not what refuses it), alone or with one other knob changed
  (BM=64 needs consumers=1); the ring depth's values are probed with every other knob at its
  smallest admissible value;
- a configuration is *accepted* when `knobs_to_config` accepts all its knobs together
  (shared memory with the ring and epilogue tile, split-K with the TMA-store epilogue);
- a configuration is *valid* when it is accepted and the verifier finds no error in the
  kernel specialisation matmul builds for it (library_verifier.py): e.g. a one-stage ring
  is accepted but the verifier proves it frees a stage while a wgmma still reads it.

`specialisation` maps knobs to (module, kernel, constants) as matmul does (SPLIT picks
gemm_splitk.py, everything else is a constant of gemm.py); tests/agent/test_library_space.py
pins it to matmul's own choice. Two configurations with one specialisation are one kernel
(split-K ignores the raster group): `canonical` picks one, so the planner never measures a
kernel twice. The CPU cost model's search is NOT restricted by this: it ranks the whole knob
table, including kernels the library does not have yet.
"""
from __future__ import annotations

import ast
import itertools
from dataclasses import replace
from functools import lru_cache

from argus.agent import kernel_source
from argus.agent.gemm_config import KNOB_BY_NAME, KNOBS, GemmConfig
from argus.agent.library_verifier import LibraryVerifier, Spec
from argus.agent.task import GemmTask

DT_OF = {"bfloat16": "bf16", "float16": "fp16"}
SEARCH_LEVELS = 4        # smallest_valid looks this many knob steps above the smallest corner


class SpaceError(ValueError):
    """The library accepts no configuration of some kind; the message says which."""


@lru_cache(maxsize=None)
def _kernel_source(module: str, name: str):
    tree = ast.parse((kernel_source.LIBRARY_DIR / f"{module}.py").read_text(encoding="utf-8"))
    fn = kernel_source.kernel_functions(tree).get(name)
    if fn is None:
        raise SpaceError(f"argus/kernels/{module}.py has no kernel {name!r}")
    return kernel_source.module_constants(tree), fn


def kernel_constants(module: str, name: str, overrides: dict) -> tuple:
    """Every constant of argus/kernels/<module>.py::name specialised with `overrides`: the
    module constants, then the const-parameter defaults evaluated with them (`BM = 64 * WG`),
    then the overrides; read from the syntax tree, never executed."""
    return _kernel_constants(module, name, tuple(sorted(overrides.items())))


@lru_cache(maxsize=4096)
def _kernel_constants(module: str, name: str, overrides: tuple) -> tuple:
    module_constants, fn = _kernel_source(module, name)
    scope = {**module_constants, **dict(overrides)}
    params = [a.arg for a in fn.args.args][-len(fn.args.defaults):] if fn.args.defaults else []
    defaults = {}
    for param, node in zip(params, fn.args.defaults):
        try:
            defaults[param] = kernel_source.const_value(node, scope)
        except ValueError as err:
            raise SpaceError(f"argus/kernels/{module}.py::{name}: the default of {param} is "
                             f"not a constant expression ({err})") from None
    return tuple(sorted({**scope, **defaults, **dict(overrides)}.items()))


def spec_from_constants(constants: dict, layout: str, dtype: str) -> Spec:
    """(module, kernel, all constants) that argus.ops.matmul builds from knobs_to_config's
    (or config_for's) constants: the same choice as matmul() (split-K is gemm_splitk.py,
    the rest gemm.py's constants), every constant filled in."""
    cfg = dict(constants)
    name = "gemm_nn" if layout == "kn" else "gemm_nt"
    module = "gemm"
    if cfg.get("SPLIT"):
        cfg.pop("GROUP", None)            # the split-K schedule is row-major
        module, name = "gemm_splitk", name + "_splitk"
    cfg["DT"] = DT_OF.get(dtype, dtype)
    return module, name, kernel_constants(module, name, cfg)


class LibrarySpace:
    """The library GEMM's configurations for B stored `layout` ("kn": K x N, what the GPU
    evaluator's problem passes), with a shared verifier (memoised per specialisation)."""

    name = "library"

    def __init__(self, layout: str = "kn", verifier: LibraryVerifier | None = None):
        self.layout = layout
        self.verifier = verifier or LibraryVerifier()
        self._values: dict[tuple, object] = {}     # per task: knob values, table config

    # -- what the library accepts (knobs_to_config) ------------------------------------
    def _constants(self, knobs: dict, task: GemmTask) -> dict:
        from argus.ops.gemm_configs import knobs_to_config

        return knobs_to_config(knobs, self.layout, task.M, task.N, task.K)

    def _accepts(self, knobs: dict, task: GemmTask) -> bool:
        from argus.runtime.launch_errors import LaunchError

        try:
            self._constants(knobs, task)
        except LaunchError:
            return False
        return True

    def values(self, task: GemmTask) -> dict[str, tuple]:
        """Each knob's admissible values, in the knob table's order (smallest first)."""
        key = (task.M, task.N, task.K)
        if key not in self._values:
            ring = KNOB_BY_NAME["stages"].values[0]
            others = [k for k in KNOBS if k.name != "stages"]

            def admissible(knob, value) -> bool:    # alone, or with one other knob changed
                probe = {knob.name: value, "stages": ring}
                return self._accepts(probe, task) or any(
                    self._accepts({**probe, other.name: w}, task)
                    for other in others if other is not knob for w in other.values)

            found = {k.name: tuple(v for v in k.values if admissible(k, v)) for k in others}
            empty = [n for n, vals in found.items() if not vals]
            if empty:
                raise SpaceError(f"argus.ops.matmul accepts no value of {', '.join(empty)} "
                                 f"from the planner's knob table (gemm_config.KNOBS); align "
                                 f"the table with argus/ops/gemm_configs.py")
            smallest = {n: vals[0] for n, vals in found.items()}
            found["stages"] = tuple(v for v in KNOB_BY_NAME["stages"].values
                                    if self._accepts({**smallest, "stages": v}, task))
            if not found["stages"]:
                raise SpaceError("argus.ops.matmul accepts no ring depth even at the smallest "
                                 "tile; check the shared-memory limit in knobs_to_config")
            self._values[key] = {k.name: found[k.name] for k in KNOBS}
        return self._values[key]

    def refusal(self, cfg: GemmConfig, task: GemmTask) -> str:
        """Why argus.ops.matmul refuses `cfg` (its own message), or "" when it accepts it."""
        from argus.runtime.launch_errors import LaunchError

        try:
            self._constants(cfg.to_json(), task)
        except LaunchError as err:
            return str(err)
        return ""

    def accepts(self, cfg: GemmConfig, task: GemmTask) -> bool:
        return not self.refusal(cfg, task)

    def specialisation(self, cfg: GemmConfig, task: GemmTask) -> Spec:
        """(module, kernel, constants) matmul builds for `cfg`; LaunchError if refused."""
        return spec_from_constants(self._constants(cfg.to_json(), task), self.layout,
                                   task.dtype)

    def canonical(self, cfg: GemmConfig, task: GemmTask) -> GemmConfig:
        """`cfg` with every knob that does not change the kernel set to its smallest value."""
        from argus.runtime.launch_errors import LaunchError

        spec = self.specialisation(cfg, task)
        for knob in KNOBS:
            smallest = self.values(task)[knob.name][0]
            if getattr(cfg, knob.name) == smallest:
                continue
            trial = replace(cfg, **{knob.name: smallest})
            try:
                if self.specialisation(trial, task) == spec:
                    cfg = trial
            except LaunchError:
                continue
        return cfg

    # -- what the verifier proves ------------------------------------------------------
    def verifier_errors(self, cfg: GemmConfig, task: GemmTask) -> list[str]:
        """Error findings of the kernel matmul builds for an accepted `cfg` (memoised)."""
        return self.verifier.errors(self.specialisation(cfg, task))

    def prefetch(self, configs, task: GemmTask) -> None:
        """Verify these accepted configurations in parallel where the verifier has workers."""
        self.verifier.prefetch([self.specialisation(c, task) for c in configs])

    def valid(self, cfg: GemmConfig, task: GemmTask) -> bool:
        return self.accepts(cfg, task) and not self.verifier_errors(cfg, task)

    def why_invalid(self, cfg: GemmConfig, task: GemmTask) -> tuple[str, list[str]]:
        """("refused", [matmul's message]) / ("unverified", [findings]) / ("", [])."""
        refusal = self.refusal(cfg, task)
        if refusal:
            return "refused", [refusal]
        errors = self.verifier_errors(cfg, task)
        return ("unverified", errors) if errors else ("", [])

    # -- named configurations ------------------------------------------------------------
    def _levels(self, task: GemmTask, levels: int):
        """Lists of configurations by their number of knob steps above the smallest corner
        (in a list, the knob table's order: the earliest knob raised first)."""
        values = self.values(task)
        sizes = [len(values[k.name]) for k in KNOBS]
        for level in range(levels + 1):
            vectors = [v for v in itertools.product(*(range(min(s, level + 1)) for s in sizes))
                       if sum(v) == level]
            yield [GemmConfig(**{k.name: values[k.name][i] for k, i in zip(KNOBS, vec)})
                   for vec in sorted(vectors, key=lambda v: tuple(-i for i in v))]

    def smallest_valid(self, task: GemmTask) -> GemmConfig:
        """The library's smallest valid configuration: every knob at its smallest admissible
        value, raised by as few steps as the library and the verifier need (a one-stage
        ring is accepted by matmul but rejected by the verifier, so the ring gets two)."""
        for level in self._levels(task, SEARCH_LEVELS):
            accepted = [c for c in level if self.accepts(c, task)]
            self.prefetch(accepted, task)
            for cfg in accepted:
                if not self.verifier_errors(cfg, task):
                    return cfg
        raise SpaceError(f"no configuration within {SEARCH_LEVELS} knob steps of the smallest "
                         f"one is accepted by argus.ops.matmul and verified for "
                         f"{task.shape_text}")

    def all_accepted(self, task: GemmTask):
        """Every accepted canonical configuration (the whole space, for tests and reports)."""
        values = self.values(task)
        seen = set()
        for combo in itertools.product(*(values[k.name] for k in KNOBS)):
            cfg = GemmConfig(**dict(zip((k.name for k in KNOBS), combo)))
            if self.accepts(cfg, task):
                canon = self.canonical(cfg, task)
                if canon.key() not in seen:
                    seen.add(canon.key())
                    yield canon

    def table_config(self, task: GemmTask) -> GemmConfig:
        """The knobs of what argus.ops.matmul runs with no knobs (`config_for`: the tuned
        table or the heuristic), found by matching specialisations, so no mapping from
        constants back to knobs is assumed: a descent from the smallest accepted corner
        that changes one knob (or, when that does not help, two) at a time to reduce the
        constants that differ from the table's kernel."""
        from argus.ops.gemm_configs import config_for
        from argus.runtime.launch_errors import LaunchError

        key = ("table", task.M, task.N, task.K, task.dtype)
        if key in self._values:
            return self._values[key]
        target = spec_from_constants(config_for(task.M, task.N, task.K, self.layout),
                                     self.layout, task.dtype)
        wanted = {target[:2], *target[2]}
        values = self.values(task)

        def distance(cfg: GemmConfig) -> int | None:
            try:
                spec = self.specialisation(cfg, task)
            except LaunchError:
                return None
            return len(wanted ^ {spec[:2], *spec[2]})

        def moves(cfg: GemmConfig, width: int):
            for knobs in itertools.combinations(KNOBS, width):
                for combo in itertools.product(*(values[k.name] for k in knobs)):
                    if all(getattr(cfg, k.name) != v for k, v in zip(knobs, combo)):
                        yield replace(cfg, **{k.name: v for k, v in zip(knobs, combo)})

        cfg = next(c for level in self._levels(task, SEARCH_LEVELS) for c in level
                   if self.accepts(c, task))
        best = distance(cfg)
        while best:
            step = None
            for width in (1, 2):
                scored = [(d, c) for c in moves(cfg, width)
                          if (d := distance(c)) is not None and d < best]
                if scored:
                    best, step = min(scored, key=lambda dc: dc[0])
                    break
            if step is None:
                raise SpaceError(f"the shape table's choice for {task.shape_text} "
                                 f"({target[0]}::{target[1]} {dict(target[2])}) is no "
                                 f"configuration of the knob table; add its values to "
                                 f"gemm_config.KNOBS")
            cfg = step
        self._values[key] = self.canonical(cfg, task)
        return self._values[key]

    def describe(self, task: GemmTask) -> dict[str, list]:
        return {name: list(vals) for name, vals in self.values(task).items()}
