"""The on-disk cache of measured GEMM configurations: which knobs ran fastest for a shape
class on a GPU. One JSON file, $ARGUS_CACHE_DIR/autotune/gemm.json (default
~/.cache/argus/autotune/gemm.json), written by matmul's autotuning (autotune.py) and by
`argus optimize` (argus.agent.optimize), read by argus.ops.matmul.

An entry's key is "GPU|op|dtype|layout|shape class", e.g.
"NVIDIA H200|gemm|bf16|kn|m128-n4096-k4096": N and K exactly (a model's projections have a
handful of them), M rounded up to a power of two (the batch and sequence length vary from
call to call; one tuning serves every M of the bucket). Its value holds the knobs, the time
measured, who measured it and when, and its basis: "measured" (timed on that GPU: autotuning,
`argus optimize` on the GPU) or "predicted" (`argus optimize` on the CPU cost model, which
models that GPU; no time is recorded, only the model's `predicted_ms`). `knobs` returns
measured entries only and `predicted` the predictions; a prediction never replaces a
measurement (argus.ops.matmul takes a prediction only where neither a measured entry nor
the tuned table has the shape). Entries written before the basis existed are measured. Writes go to a temporary file in the same folder and are
renamed into place (a reader never sees half a file); a file that does not parse reads as
empty and is replaced on the next write.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path

FORMAT = 1
BASES = ("measured", "predicted")


def default_path() -> Path:
    from argus.runtime.cache import default_cache_dir
    return default_cache_dir() / "autotune" / "gemm.json"


def m_bucket(m: int) -> int:
    """The power of two at or above M: the rows of a shape class."""
    return 1 << max(0, (int(m) - 1).bit_length())


def shape_class(m: int, n: int, k: int) -> str:
    return f"m{m_bucket(m)}-n{n}-k{k}"


def entry_key(gpu: str, dtype: str, layout: str, m: int, n: int, k: int,
              op: str = "gemm") -> str:
    """The key of a configuration measured for (GPU, op, dtype, B layout, shape class)."""
    if dtype not in ("bf16", "fp16") or layout not in ("kn", "nk"):
        raise ValueError(f"dtype {dtype!r} / layout {layout!r}: bf16 or fp16, kn or nk")
    return "|".join((gpu, op, dtype, layout, shape_class(m, n, k)))


class TuneCache:
    """The entries of one cache file, read once and kept; `record` writes the file anew."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_path()
        self._entries: dict | None = None

    def entries(self) -> dict:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError, OSError):
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT or \
                not isinstance(data.get("entries"), dict):
            return {}
        entries = data["entries"]
        return {k: v for k, v in entries.items()
                if isinstance(v, dict) and isinstance(v.get("knobs"), dict)}

    def _knobs(self, key: str, basis: str) -> dict | None:
        entry = self.entries().get(key)
        if entry is None or entry.get("basis", "measured") != basis:
            return None
        return dict(entry["knobs"])

    def knobs(self, key: str) -> dict | None:
        """The measured configuration of `key`, if any."""
        return self._knobs(key, "measured")

    def predicted(self, key: str) -> dict | None:
        """The cost model's configuration of `key`, if one was recorded and never measured."""
        return self._knobs(key, "predicted")

    def record(self, key: str, knobs: dict, time_ms: float | None, source: str,
               basis: str = "measured", predicted_ms: float | None = None) -> bool:
        """Keep `knobs` as the configuration of `key` (the latest measurement wins; a
        prediction does not replace a measurement), merged with what other processes wrote
        since this one read the file. False when it was not written."""
        if basis not in BASES:
            raise ValueError(f"basis {basis!r}: one of {BASES}")
        entries = self._read()
        if basis == "predicted" and entries.get(key, {}).get("basis", "measured") == \
                "measured" and key in entries:
            self._entries = entries
            return False
        entry = {"knobs": dict(knobs), "time_ms": time_ms if basis == "measured" else None,
                 "source": source, "basis": basis,
                 "measured": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        if basis == "predicted":
            entry["predicted_ms"] = predicted_ms
        entries[key] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"format": FORMAT, "entries": entries}, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._entries = entries
        return True


OPEN_CACHES: dict[str, TuneCache] = {}      # path -> its cache; cleared, as a new process


def cache_at(path) -> TuneCache:
    """The TuneCache of one file, opened once per process and path (the GEMM's and the
    attention's caches are two such files)."""
    key = str(path)
    cache = OPEN_CACHES.get(key)
    if cache is None:
        cache = OPEN_CACHES[key] = TuneCache(key)
    return cache
