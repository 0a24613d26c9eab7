"""Job functions the parallel backends' tests run on their workers (imported there by name).

`rendezvous` holds each job until `want` distinct processes have checked in under the job's
folder (or a timeout passes), so a backend that can spread work over several workers shows
it, whatever the start-up order; `timed` records the interval and the GPU each timing job
saw, to check that no two jobs shared a GPU at once."""
import os
import time
from pathlib import Path


def rendezvous(arg):
    folder, want, value = Path(arg["folder"]), int(arg["want"]), arg["value"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / str(os.getpid())).touch()
    deadline = time.monotonic() + float(arg.get("timeout", 60))
    while len(list(folder.iterdir())) < want and time.monotonic() < deadline:
        time.sleep(0.02)
    return value * value


def timed(arg):
    start = time.time()
    time.sleep(float(arg.get("sleep", 0.2)))
    end = time.time()
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES")
    with open(Path(arg["folder"]) / f"{arg['value']}.txt", "w") as f:
        f.write(f"{gpu} {start} {end} {os.getpid()}\n")
    return {"value": arg["value"], "gpu": gpu}


def fake_benchmark(config, task):
    """A GPU benchmark stand-in for GpuEvaluator.evaluate_many: wider tiles are faster."""
    if config.BN == 192:
        return {"status": "incorrect", "reasons": ["row 3 differs"]}
    return {"status": "ok", "time_ms": 1.0 - config.BN * 1e-3, "peer_time_ms": 0.9,
            "reasons": []}


def overlaps(folder):
    """(the GPUs used, pairs of jobs timed on one GPU at overlapping times)."""
    rows = [line.split() for p in Path(folder).glob("*.txt") for line in p.read_text().splitlines()]
    by_gpu = {}
    for gpu, start, end, _pid in rows:
        by_gpu.setdefault(gpu, []).append((float(start), float(end)))
    clashes = []
    for gpu, spans in by_gpu.items():
        spans.sort()
        clashes += [(gpu, a, b) for a, b in zip(spans, spans[1:]) if b[0] < a[1]]
    return sorted(by_gpu), clashes, len(rows)
