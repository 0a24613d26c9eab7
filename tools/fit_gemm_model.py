"""Fit the GEMM configuration model's rates (argus/ops/gemm_model.py) to an H200 sweep
(scripts/device_gemm_sweep.py), by what the model is for: choosing. The loss of a set of
rates is the mean regret, log(measured time of the configuration the model picks /
measured time of the fastest one measured), over the sweep's shapes; coordinate descent
on multiplicative steps, the shapes of one seed fitted and those of the others held out.

    python tools/fit_gemm_model.py benchmarks/results/gemm-sweep-*.json [--fit-seed 11]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argus.ops.gemm_model import RATES, Rates, misaligned, predict  # noqa: E402

SCALARS = ("l2_gbps_per_sm", "dram_gbps", "launch_us", "epilogue_gbps_per_sm",
           "overlapped_epilogue", "split_extra_us", "atomic_gbps", "cluster_gain", "item_us", "l2_total_gbps")


def cases(paths):
    out = []
    for path in paths:
        for row in json.loads(Path(path).read_text())["rows"]:
            timed = [(e["knobs"], e["ms"]) for e in row.get("configs", []) if "ms" in e]
            if timed:
                off = misaligned(row["m"], row["n"], row["k"], row["layout"])
                out.append((row["seed"], row["m"], row["n"], row["k"], timed,
                            row["cublas_ms"], off))
    return out


def regret(rates: Rates, data) -> tuple[float, float]:
    """(mean log regret, geomean of the picked configuration's ratio to cuBLAS)."""
    total = ratio = 0.0
    for _, m, n, k, timed, cublas, off in data:
        best = min(ms for _, ms in timed)
        pick = min(timed, key=lambda kt: predict(m, n, k, kt[0], rates, off_pitch=off).us)[1]
        total += math.log(pick / best)
        ratio += math.log(cublas / pick)
    return total / len(data), math.exp(ratio / len(data))


def with_value(rates: Rates, name: str, value) -> Rates:
    if name.startswith("mma:"):
        key = name[4:]
        table = tuple((k, value if k == key else v) for k, v in rates.mma_eff)
        return dataclasses.replace(rates, mma_eff=table)
    return dataclasses.replace(rates, **{name: value})


def value_of(rates: Rates, name: str):
    if name.startswith("mma:"):
        return dict(rates.mma_eff)[name[4:]]
    return getattr(rates, name)


def fit(data, rates: Rates, rounds: int = 6, restarts: int = 6, seed: int = 0) -> Rates:
    """Coordinate descent from the given rates and from `restarts` random perturbations
    of them; the best end point."""
    import random
    rng = random.Random(seed)
    names = [f"mma:{k}" for k, _ in rates.mma_eff] + list(SCALARS)
    starts = [rates]
    for _ in range(restarts):
        start = rates
        for name in names:
            value = value_of(start, name) * math.exp(rng.uniform(-0.7, 0.7))
            if name.startswith("mma:") or name == "overlapped_epilogue":
                value = min(1.0, value)
            start = with_value(start, name, value)
        starts.append(start)
    ends = [_descend(data, start, names, rounds) for start in starts]
    return min(ends, key=lambda r: regret(r, data)[0])


def _descend(data, rates: Rates, names, rounds: int) -> Rates:
    loss = regret(rates, data)[0]
    for step in (1.6, 1.25, 1.1, 1.04)[:rounds]:
        improved = True
        while improved:
            improved = False
            for name in names:
                for factor in (step, 1 / step):
                    trial_value = value_of(rates, name) * factor
                    if name.startswith("mma:") or name == "overlapped_epilogue":
                        trial_value = min(1.0, trial_value)
                    trial = with_value(rates, name, trial_value)
                    trial_loss = regret(trial, data)[0]
                    if trial_loss < loss - 1e-6:
                        rates, loss, improved = trial, trial_loss, True
    return rates


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--fit-seed", type=int, default=None,
                    help="fit on this seed's shapes, report the others as held out")
    args = ap.parse_args()
    data = cases(args.sweeps)
    train = [c for c in data if args.fit_seed is None or c[0] == args.fit_seed]
    held = [c for c in data if args.fit_seed is not None and c[0] != args.fit_seed]
    print(f"{len(data)} shapes ({len(train)} fitted, {len(held)} held out)")
    print("current rates: fitted regret %.4f (geomean %.3f)" % regret(RATES, train))
    if held:
        print("               held-out regret %.4f (geomean %.3f)" % regret(RATES, held))
    best_all = math.exp(sum(math.log(c[5] / min(ms for _, ms in c[4])) for c in data) / len(data))
    print(f"the fastest measured configuration of every shape: geomean {best_all:.3f}")
    fitted = fit(train, RATES)
    print("fitted rates:  fitted regret %.4f (geomean %.3f)" % regret(fitted, train))
    if held:
        print("               held-out regret %.4f (geomean %.3f)" % regret(fitted, held))
    print(fitted)
    return 0


if __name__ == "__main__":
    sys.exit(main())


def worst(rates: Rates, data, count: int = 15) -> list[str]:
    """The shapes where the model's pick is furthest from the fastest measured."""
    lines = []
    for _, m, n, k, timed, cublas, off in data:
        best_knobs, best = min(timed, key=lambda kt: kt[1])
        pick_knobs, pick = min(timed, key=lambda kt: predict(m, n, k, kt[0], rates, off_pitch=off).us)
        lines.append((pick / best, f"{m}x{n}x{k}: pick {pick * 1e3:.1f} us {pick_knobs} / best "
                      f"{best * 1e3:.1f} us {best_knobs} (cuBLAS {cublas * 1e3:.1f} us, "
                      f"predicted {predict(m, n, k, pick_knobs, rates, off_pitch=off).us:.1f} / "
                      f"{predict(m, n, k, best_knobs, rates, off_pitch=off).us:.1f})"))
    lines.sort(reverse=True)
    return [f"{r:.3f} {text}" for r, text in lines[:count]]
