"""Building many library-GEMM specialisations at once: each configuration's kernel is parsed,
generated and compiled in a pool of processes into the shared disk cache ($ARGUS_CACHE_DIR),
so that a benchmark or a sweep over many shapes does not compile them one by one on its
first calls."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed


def specialisation(layout: str, m: int, n: int, k: int, knobs: dict, dtype: str = "bf16"):
    """(module, kernel name, constants) of one configuration, as argus.ops.matmul plans it."""
    from .gemm_configs import knobs_to_config
    cfg = knobs_to_config(dict(knobs), layout, m, n, k) if knobs else \
        knobs_to_config({}, layout, m, n, k)
    name = "gemm_nn" if layout == "kn" else "gemm_nt"
    if cfg.get("SPLIT"):
        cfg.pop("GROUP", None)
        return "gemm_splitk", name + "_splitk", dict(cfg, DT=dtype)
    return "gemm", name, dict(cfg, DT=dtype)


def spec_key(spec) -> tuple:
    return spec[0], spec[1], tuple(sorted(spec[2].items()))


def build_one(spec):
    """(spec, error or None, seconds): one specialisation compiled into the disk cache."""
    start = time.time()
    try:
        from argus.runtime.build import BuildOptions, build_kernel

        from .library import generated
        build_kernel(generated(spec[0], spec[1], **spec[2]).source, BuildOptions())
        return spec, None, time.time() - start
    except Exception as err:   # reported per specialisation; the caller goes on
        return spec, f"{type(err).__name__}: {err}"[:300], time.time() - start


def prebuild(specs, workers: int | None = None, log=print) -> dict:
    """Compile every distinct specialisation of `specs`; {spec_key: error} of the failures."""
    unique = {spec_key(s): s for s in specs}
    workers = workers or max(1, (os.cpu_count() or 2) - 2)
    failed = {}
    start = time.time()
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(build_one, spec) for spec in unique.values()]
        for done, fut in enumerate(as_completed(futures), 1):
            spec, err, _ = fut.result()
            if err:
                failed[spec_key(spec)] = err
                log(f"build failed {spec}: {err}")
    log(f"built {len(unique)} specialisations in {time.time() - start:.0f}s "
        f"({len(failed)} failed)")
    return failed
