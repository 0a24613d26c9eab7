"""The GEMM schedule parameters the planner searches over, and their parsing.

These are the compile-time constants of the library GEMM (examples/gemm.py and the GPU
backend's kernel): the CTA tile, pipeline depth, role split, cluster, tile order, split-K
and epilogue. `KNOBS` is the single table of names, types and admissible values; prompts,
parsing, the MCP tool schemas and the embedded planner all read it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class Knob:
    name: str
    kind: type
    values: tuple            # admissible values, in increasing order of "size"
    doc: str


KNOBS = (
    Knob("BM", int, (64, 128, 192, 256), "CTA tile rows (M); a multiple of 64 per consumer warpgroup"),
    Knob("BN", int, (16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256),
         "CTA tile columns (N); the wgmma N, a multiple of 16 up to 256"),
    Knob("BK", int, (32, 64, 128), "k extent of one pipeline stage"),
    Knob("stages", int, tuple(range(1, 13)), "depth of the shared-memory ring (TMA -> wgmma)"),
    Knob("consumers", int, (1, 2, 3), "consumer (math) warpgroups; each owns BM/consumers rows"),
    Knob("warp_specialized", bool, (False, True),
         "a producer warpgroup issues the TMA loads (setmaxnreg moves its registers to consumers)"),
    Knob("cluster_m", int, (1, 2, 4), "CTAs of a cluster along M; they multicast the shared B tile"),
    Knob("cluster_n", int, (1, 2, 4), "CTAs of a cluster along N; they multicast the shared A tile"),
    Knob("raster", str, ("m", "n"), "which tile index moves fastest in the schedule"),
    Knob("group", int, (1, 2, 4, 8, 16), "grouped (swizzled) raster: tiles per group along the slow axis"),
    Knob("persistent", bool, (False, True), "one CTA per SM walks many tiles (no relaunch, epilogue overlap)"),
    Knob("split_k", int, (1, 2, 4, 8), "split the K loop across CTAs, reduced in fp32"),
    Knob("epilogue", str, ("direct", "smem_tma", "tma_chunks"),
         "store C from registers, through shared memory and one TMA store of the tile, or "
         "the same in 64-column blocks through two buffers (leaves room for a deeper ring)"),
)
KNOB_BY_NAME = {k.name: k for k in KNOBS}


@dataclass(frozen=True)
class GemmConfig:
    BM: int = 64
    BN: int = 64
    BK: int = 64
    stages: int = 2
    consumers: int = 1
    warp_specialized: bool = False
    cluster_m: int = 1
    cluster_n: int = 1
    raster: str = "n"
    group: int = 1
    persistent: bool = False
    split_k: int = 1
    epilogue: str = "direct"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def key(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self))

    def threads(self) -> int:
        return 128 * (self.consumers + (1 if self.warp_specialized else 0))

    def diff(self, other: "GemmConfig") -> dict[str, Any]:
        """The knobs where `self` differs from `other`, with self's values."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(other, f.name)}

    def short(self) -> str:
        ws = "ws" if self.warp_specialized else "nows"
        return (f"{self.BM}x{self.BN}x{self.BK} S{self.stages} C{self.consumers} {ws} "
                f"cl{self.cluster_m}x{self.cluster_n} r{self.raster}{self.group} "
                f"{'pers' if self.persistent else 'grid'} sk{self.split_k} {self.epilogue}")


SMALLEST = GemmConfig()   # the library's smallest configuration: the planner's start


class ConfigError(ValueError):
    """A configuration that is not well-typed; `problems` lists every bad knob."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def parse_config(data: Any, base: GemmConfig = SMALLEST) -> GemmConfig:
    """A GemmConfig from a mapping (an LLM's reply, a JSON file); omitted knobs keep `base`.

    Strict: unknown knobs, wrong types (True is not 1, "128" is not 128) and values outside
    the admissible set are all reported together, each with what is allowed."""
    if not isinstance(data, dict):
        raise ConfigError([f"config must be a JSON object of knobs, got {type(data).__name__}"])
    problems, values = [], {}
    for name, value in data.items():
        knob = KNOB_BY_NAME.get(name)
        if knob is None:
            problems.append(f"unknown knob {name!r}; the knobs are {', '.join(KNOB_BY_NAME)}")
            continue
        if knob.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append(f"{name} must be an integer, got {value!r}")
            continue
        if knob.kind is bool and not isinstance(value, bool):
            problems.append(f"{name} must be true or false, got {value!r}")
            continue
        if knob.kind is str and not isinstance(value, str):
            problems.append(f"{name} must be a string, got {value!r}")
            continue
        if value not in knob.values:
            problems.append(f"{name}={value!r} is not admissible; allowed: "
                            f"{', '.join(map(str, knob.values))}")
            continue
        values[name] = value
    if problems:
        raise ConfigError(problems)
    return replace(base, **values)


def knob_schema() -> list[dict[str, Any]]:
    """The knob table as JSON (for prompts and tool schemas)."""
    return [{"name": k.name, "type": k.kind.__name__, "values": list(k.values), "doc": k.doc}
            for k in KNOBS]
