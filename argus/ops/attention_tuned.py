"""The on-disk cache of tuned attention configurations: which knobs of
argus/kernels/attention.py ran fastest for a shape class on a GPU. One JSON file,
$ARGUS_CACHE_DIR/autotune/attention.json (default ~/.cache/argus/autotune/attention.json),
in the format of the GEMM's (tune_cache.TuneCache: atomic rewrites, merged with what other
processes wrote, a prediction never replacing a measurement), written by
`argus optimize attention` (argus/agent/attention/optimize.py), read by argus.ops.attention.

An entry's key is "GPU|attention@REVISION|dtype|layout|shape class", e.g.
"NVIDIA H200|attention@4|bf16|bhsd|d128-g1-causal-sq4096-sk4096-bh64": the revision of the
kernel's defaults the knobs were measured over (an entry of an earlier one is not read: its
knobs on today's kernel are not what was timed), the head dim, the GQA
group and the mask exactly (each is its own kernel), the query and key lengths and the
number of (batch, query head) pairs rounded up to powers of two (one tuning serves every
length of the bucket). Its value holds the knobs (the module constants of attention.py
the planner chose: BN, S, SPLIT_KV, MASK, FOLD_SCALE, OVERLAP, LPT).
"""

from __future__ import annotations

from .tune_cache import OPEN_CACHES, TuneCache, cache_at

_caches = OPEN_CACHES        # tests clear it to read the files again
_known: dict[tuple, dict | None] = {}        # (path, key) -> the knobs read, per process


def default_path():
    from argus.runtime.cache import default_cache_dir
    return default_cache_dir() / "autotune" / "attention.json"


def _pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def shape_class(b: int, hq: int, hk: int, sq: int, sk: int, d: int, causal: bool) -> str:
    return (f"d{d}-g{hq // hk}-{'causal' if causal else 'full'}-sq{_pow2(sq)}-sk{_pow2(sk)}-"
            f"bh{_pow2(b * hq)}")


# Revision 2 (2026-12-06): DEFER = 1 by default, and it needs a third stage (a knob set tuned
# before with S = 2 runs 10-18% slower on it); revision 1 had no tag in the key.
# Revision 3 (2026-12-06): one consumer warpgroup (WGS = 1) by default when SQ <= 64.
# Revision 4 (2026-12-06): the persistent grid when not causal; causal d = 64 two blocks an SM.
REVISION = 4


def entry_key(gpu: str, dtype: str, layout: str, b: int, hq: int, hk: int, sq: int, sk: int,
              d: int, causal: bool) -> str:
    if dtype not in ("bf16", "fp16") or layout not in ("bhsd", "bshd"):
        raise ValueError(f"dtype {dtype!r} / layout {layout!r}: bf16 or fp16, bhsd or bshd")
    return "|".join((gpu, f"attention@{REVISION}", dtype, layout,
                     shape_class(b, hq, hk, sq, sk, d, causal)))


def current_cache() -> TuneCache:
    """The cache at the current $ARGUS_CACHE_DIR (read once per process and path)."""
    return cache_at(default_path())


def tuned_knobs(key: str) -> dict | None:
    """The measured knobs of `key`, else the predicted ones, else None; looked up once per
    process (a call's host time matters), `forget()` drops what was read."""
    cache = current_cache()
    memo = (str(cache.path), key)
    if memo not in _known:
        _known[memo] = cache.knobs(key) or cache.predicted(key)
    found = _known[memo]
    return dict(found) if found is not None else None


_by_call: dict[tuple, dict | None] = {}    # (cache dir, GPU, shape class) -> knobs


def tuned_for(gpu: str, dtype: str, layout: str, b: int, hq: int, hk: int, sq: int, sk: int,
              d: int, causal: bool) -> dict | None:
    """tuned_knobs of the call's entry, memoised by its shape class and the cache folder
    (what argus.ops.attention asks on every call: a dictionary lookup after the first, and
    as many entries as classes however the lengths vary)."""
    import os

    memo = (os.environ.get("ARGUS_CACHE_DIR"), gpu, dtype, layout, d, hq // hk, bool(causal),
            _pow2(sq), _pow2(sk), _pow2(b * hq))
    if memo not in _by_call:
        _by_call[memo] = tuned_knobs(entry_key(gpu, dtype, layout, b, hq, hk, sq, sk, d, causal))
    found = _by_call[memo]
    return dict(found) if found is not None else None


def record(key: str, knobs: dict, time_ms: float | None, source: str, basis: str = "measured",
           predicted_ms: float | None = None) -> bool:
    written = current_cache().record(key, knobs, time_ms, source, basis, predicted_ms)
    forget()
    return written


def forget() -> None:
    _known.clear()
    _by_call.clear()
    _caches.clear()
