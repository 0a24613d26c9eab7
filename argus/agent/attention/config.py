"""One configuration of the library attention kernel: the compile-time knobs of
argus/kernels/attention.py that do not come from the problem (argus/ops/attention_configs.py
KNOBS). The defaults are the kernel module's."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class AttentionConfig:
    BN: int = 128          # keys per block
    S: int = 2             # K/V ring stages
    SPLIT_KV: int = 1      # K and V of a stage on their own barriers
    MASK: str = "edge"     # mask only the diagonal and tail blocks ("all": every block)
    FOLD_SCALE: int = 1    # the softmax scale folded into exp2's FMA
    OVERLAP: int = 0       # S of block j + 1 issued before the softmax of block j
    LPT: int = 0           # the grid launched in reverse: each head's longest query block first
    WGS: int = 2           # consumer warpgroups of 64 query rows (1: decode's 64-row tile)
    HEAD_GROUP: int = 1    # g heads' query blocks interleaved on grid x (bhsd, one tile a block)

    def to_json(self) -> dict:
        return asdict(self)

    def key(self) -> tuple:
        return tuple(asdict(self).values())

    def short(self) -> str:
        return (f"BN{self.BN} S{self.S} kv{self.SPLIT_KV} {self.MASK} fold{self.FOLD_SCALE} "
                f"ovl{self.OVERLAP} lpt{self.LPT}" + (f" wgs{self.WGS}" if self.WGS != 2 else "")
                + (f" hg{self.HEAD_GROUP}" if self.HEAD_GROUP != 1 else ""))

    def diff(self, other: "AttentionConfig") -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(other, f.name)}

    @classmethod
    def from_json(cls, data: dict) -> "AttentionConfig":
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown attention knob(s) {', '.join(unknown)}; the kernel takes "
                             f"{', '.join(sorted(names))}")
        return cls(**data)


KNOB_NAMES = tuple(f.name for f in fields(AttentionConfig))
