"""Autotuning the library GEMM, as a Triton user expects it: opt in with
`argus.ops.matmul(a, b, autotune=True)` or ARGUS_AUTOTUNE=1, and the first call of a shape
class (tune_cache.py) times each candidate configuration on the call's own operands, keeps
the fastest in the on-disk cache and uses it from then on, in this process and the next.

The candidates (`candidates`) are the configuration the shape would get anyway (the tuned
table or the configuration model) and the model's next cheapest configurations of the
shape (tile BM x BN, split-K, epilogue, clusters: gemm_model.space); each one
knobs_to_config accepts, each kernel once. A candidate that fails to build or launch is
skipped (and reported). Nothing is tuned while a CUDA graph is being captured (timing would
break the capture): that call takes the untuned configuration.
"""

from __future__ import annotations

import os
import statistics
from functools import lru_cache

from argus.runtime.launch_errors import LaunchError

from .gemm_configs import knobs_to_config, shape_knobs
from .tune_cache import OPEN_CACHES, TuneCache, cache_at, default_path

_caches = OPEN_CACHES        # tests clear it to read the files again


def enabled(flag) -> bool:
    """The call's `autotune=`, else ARGUS_AUTOTUNE (1/0)."""
    if flag is not None:
        return bool(flag)
    return os.environ.get("ARGUS_AUTOTUNE", "").strip().lower() not in ("", "0", "false", "no")


def current_cache() -> TuneCache:
    """The cache at the current $ARGUS_CACHE_DIR (read once per process and path)."""
    return cache_at(default_path())


@lru_cache(maxsize=16)
def _cuda_name(index: int) -> str:
    import torch
    return torch.cuda.get_device_name(index)


def device_name(tensor) -> str:
    """What the cache keys a measurement by: the GPU's name; "interpreter" off the GPU."""
    if tensor.is_cuda:
        return _cuda_name(tensor.device.index if tensor.device.index is not None else 0)
    return "interpreter"


def capturing(tensor) -> bool:
    if not tensor.is_cuda:
        return False
    import torch
    return torch.cuda.is_current_stream_capturing()



def candidates(m: int, n: int, k: int, layout: str, count: int = 8) -> list[dict]:
    """Knob sets worth timing for this shape, the untuned choice first, then the
    configuration model's next cheapest (gemm_model.ranked); each accepted by
    knobs_to_config, no two specialising the kernel alike, at most `count`."""
    from .gemm_model import ranked

    proposals = [shape_knobs(m, n, k, layout)] + [knobs for _, knobs in ranked(m, n, k, layout)]
    chosen, seen = [], set()
    for knobs in proposals:
        if len(chosen) == count:
            break
        try:
            cfg = knobs_to_config(knobs, layout, m, n, k)
        except LaunchError:
            continue
        signature = tuple(sorted(cfg.items()))
        if signature not in seen:
            seen.add(signature)
            chosen.append(dict(knobs))
    return chosen


def default_timer(run) -> float:
    """Milliseconds one `run()` takes: on the GPU the median of 5 rounds of 10 launches
    timed with CUDA events after a warm-up launch (which also builds the kernel)."""
    import time

    import torch

    run()
    if not torch.cuda.is_available():
        start = time.perf_counter()       # the interpreter: its own time, for the order only
        run()
        return (time.perf_counter() - start) * 1e3
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(10):
            run()
        end.record()
        end.synchronize()
        rounds.append(begin.elapsed_time(end) / 10)
    return statistics.median(rounds)


def tune(proposals: list[dict], run, timer=None) -> tuple[dict, float, list[str]]:
    """(the fastest knobs, its milliseconds, one line per candidate): `run(knobs)` launches
    one configuration, `timer(fn)` measures a callable (default_timer unless given)."""
    timer = timer or default_timer
    report, best = [], None
    for knobs in proposals:
        try:
            ms = float(timer(lambda knobs=knobs: run(knobs)))
        except Exception as err:     # a candidate that does not build or launch: skipped
            report.append(f"{knobs}: failed: {type(err).__name__}: {err}")
            continue
        report.append(f"{knobs}: {ms:.4f} ms")
        if best is None or ms < best[1]:
            best = (knobs, ms)
    if best is None:
        raise LaunchError("autotuning found no configuration that runs: " + "; ".join(report))
    return best[0], best[1], report
