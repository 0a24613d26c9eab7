"""Per-op differential testing: every case of tests/opdiff/cases.py (one small DSL kernel per
op and layout class) runs in the interpreter's fragment-exact mode and on the GPU on the
same inputs, and the two must agree (bit for bit, or within the op's stated bound).

    python benchmarks/op_diff.py prepare DIR       # CPU: draw inputs, run the interpreter
    python benchmarks/op_diff.py gpu DIR [--json F] # H200: build, launch, compare

`prepare` writes DIR/opdiff.npz (inputs and the interpreter's outputs, seed 2026) so the
device spends its time on the GPU side only; `gpu` writes the results JSON (default
benchmarks/results/op-diff-<date>.json) and exits 1 if any case disagrees.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SEED = 2026


def _cases():
    spec = importlib.util.spec_from_file_location("opdiff_cases", ROOT / "tests/opdiff/cases.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["opdiff_cases"] = module        # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _kernel(case):
    from argus.frontend.parse import parse_source
    return parse_source(case.source, f"<{case.name}>")[case.kernel]


def prepare(out: Path) -> int:
    from argus.interp.evaluator import interpret
    C = _cases()
    out.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for i, case in enumerate(C.all_cases()):
        rng = np.random.default_rng(SEED + i)
        inputs = C.poisoned(case, case.draw(rng))
        result = interpret(_kernel(case), {k: v.copy() for k, v in inputs.items()}, mode="exact")
        for name, value in inputs.items():
            arrays[f"{case.name}/in/{name}"] = value
        for name in case.outputs:
            arrays[f"{case.name}/want/{name}"] = np.asarray(result.outputs[name])
    np.savez_compressed(out / "opdiff.npz", **arrays)
    print(f"prepared {len(C.all_cases())} cases in {out / 'opdiff.npz'}")
    return 0


TORCH = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "int32": "int32"}


def gpu(data: Path, json_path: Path | None) -> int:
    import torch

    from argus.codegen import generate
    from argus.runtime import BuildOptions, build_kernel
    from argus.runtime.launch import Launcher

    C = _cases()
    saved = np.load(data / "opdiff.npz")
    rows, failed = [], 0
    for case in C.all_cases():
        row = {"case": case.name}
        t0 = time.perf_counter()
        try:
            kernel = _kernel(case)
            gen = generate(kernel)
            entry = build_kernel(gen.source, BuildOptions())
            dtypes = {p.name: str(p.type.dtype) for p in kernel.params if hasattr(p.type, "shape")}
            tensors = {}
            for name, dtype in dtypes.items():
                host = torch.from_numpy(np.ascontiguousarray(saved[f"{case.name}/in/{name}"]))
                tensors[name] = host.to(getattr(torch, TORCH[dtype])).cuda()
            Launcher(gen, entry.cubin, kernel)(*tensors.values())
            torch.cuda.synchronize()
            got = {n: (tensors[n].cpu().numpy() if dtypes[n] == "int32"
                       else tensors[n].float().cpu().numpy()) for n in case.outputs}
            want = {n: saved[f"{case.name}/want/{n}"] for n in case.outputs}
            row.update(C.judge(case, got, want))
        except Exception as err:                    # a failure is a row, not a stop
            row.update({"ok": False, "why": f"{type(err).__name__}: {str(err)[:400]}"})
        row["seconds"] = round(time.perf_counter() - t0, 3)
        failed += not row["ok"]
        rows.append(row)
        print(f"{'ok  ' if row['ok'] else 'FAIL'} {case.name:45s} {row.get('bound', '')} "
              f"worst {row.get('worst', '-')} {row.get('why', '')}")
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "device": torch.cuda.get_device_name(), "command": " ".join(sys.argv),
              "seed": SEED, "cases": len(rows), "failed": failed, "rows": rows}
    path = json_path or ROOT / "benchmarks/results" / \
        f"op-diff-{datetime.date.today().strftime('%Y%m%d')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    print(f"{len(rows) - failed} of {len(rows)} cases agree; {path}")
    return 1 if failed else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", choices=["prepare", "gpu"])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    return prepare(args.dir) if args.phase == "prepare" else gpu(args.dir, args.json)


if __name__ == "__main__":
    sys.exit(main())
