"""The child that checks and times attention configurations, many per process:
`python -m argus.agent.attention.gpu_worker FD DEVICE` (the protocol of
evaluators/gpu_worker.py, driven by evaluators/gpu_session.WorkerSession).

Jobs arrive as JSON lines on stdin: {"id", "task" (AttentionTask.describe()), "config"
(the knobs), "seed", "timing": {"warmup", "reps"}}. On FD it writes {"phase": "ready"} once,
then per job {"phase": "started"} and {"phase": "result", "result": {...}}.

One job (`check_and_time`): q, k, v drawn on the device from the job's seed (normal values),
O and the log-sum-exp filled with NaN, one call of attention_into with the knobs; O against
torch SDPA in fp32 on every row (bf16/fp16 rounding bound of argus.bench.attention_bench's
`compare`), the log-sum-exp against float64 on sampled rows of two heads; then, only when
correct, `reps` calls timed by CUDA events with the L2 flushed before each (median), each
call a replay of a CUDA graph of one call (the op's host work left out; eager if capture
fails, and the result says which).
A wrong answer is a finished job ("status": "ok", "verdict": "incorrect"): the session keeps
the child, since a wrong result leaves the CUDA context usable (an exception, a crash or a
hang still ends it, and the next job starts a fresh one).
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback


def _send(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message, default=str) + "\n").encode())


def make_inputs(task, seed: int, device):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    dtype = torch.bfloat16 if task.dtype == "bf16" else torch.float16

    def one(h, s):
        shape = (task.b, h, s, task.d) if task.layout == "bhsd" else (task.b, s, h, task.d)
        return torch.randn(shape, generator=g, device=device, dtype=torch.float32).to(dtype)
    return one(task.hq, task.sq), one(task.hk, task.sk), one(task.hk, task.sk)


def sdpa_fp32(task, q, k, v):
    """O of SDPA in fp32 in (B, H, S, D), rows that keep no key 0 (the op's convention)."""
    import torch
    import torch.nn.functional as F

    from argus.bench.attention_bench import heads_first

    qh, kh, vh = (heads_first(x, task.layout).float() for x in (q, k, v))
    if task.group > 1:
        kh, vh = kh.repeat_interleave(task.group, 1), vh.repeat_interleave(task.group, 1)
    kwargs = {}
    if task.causal and task.sq == task.sk:
        kwargs["is_causal"] = True
    elif task.causal:
        keep = (torch.arange(task.sk, device=q.device)[None, :]
                <= torch.arange(task.sq, device=q.device)[:, None] + task.sk - task.sq)
        kwargs["attn_mask"] = keep
    o = F.scaled_dot_product_attention(qh, kh, vh, scale=task.scale, **kwargs)
    if task.causal and task.sq > task.sk:
        o[:, :, :task.sq - task.sk] = 0
    return torch.nan_to_num(o, nan=0.0)


def check(task, q, k, v, out, lse) -> dict:
    import torch

    from argus.bench.attention_bench import compare, heads_first, reference_rows

    ref_o = sdpa_fp32(task, q, k, v)
    got_o = heads_first(out, task.layout)
    g = torch.Generator().manual_seed(7)
    rows = torch.unique(torch.cat([torch.arange(min(32, task.sq)),
                                   torch.arange(max(0, task.sq - 32), task.sq),
                                   torch.randint(0, task.sq, (32,), generator=g)]))
    heads = sorted({0, task.hq - 1})
    qh, kh, vh = (heads_first(x, task.layout) for x in (q, k, v))
    kv = [h // task.group for h in heads]
    _, ref_lse = reference_rows(qh[:1, heads], kh[:1, kv], vh[:1, kv], task.causal, task.scale,
                                rows)
    got_lse = lse[:1, heads][:, :, rows.to(lse.device)]
    reasons = compare(got_o, got_lse, ref_o.double(), ref_lse, task.dtype)
    err = (got_o.double() - ref_o.double()).abs().max().item()
    return {"reasons": reasons, "max_error": err if math.isfinite(err) else None}


def check_and_time(job: dict, device: str, clock, flusher) -> dict:
    import torch

    from argus.agent.attention.task import AttentionTask
    from argus.bench.timing import time_calls
    from argus.ops.attention import attention_into

    task = AttentionTask.from_json(job["task"])
    knobs = dict(job["config"])
    q, k, v = make_inputs(task, int(job.get("seed", 0)), device)
    o_shape = tuple(q.shape)
    out = torch.full(o_shape, float("nan"), dtype=q.dtype, device=device)
    lse = torch.full((task.b, task.hq, task.sq), float("nan"), dtype=torch.float32,
                     device=device)
    cuda = str(device).startswith("cuda")
    t0 = time.monotonic()
    attention_into(q, k, v, task.causal, task.scale, task.layout, out, lse, knobs=knobs)
    if cuda:
        torch.cuda.synchronize()
    first_s = time.monotonic() - t0
    verdict = check(task, q, k, v, out, lse)
    if verdict["reasons"]:      # a finished job: the session keeps this child (see above)
        return {"status": "ok", "verdict": "incorrect", "reasons": verdict["reasons"],
                "max_error": verdict["max_error"], "first_call_s": first_s}
    timing = job.get("timing") or {}

    def call():
        attention_into(q, k, v, task.causal, task.scale, task.layout, out, lse, knobs=knobs)

    timed, mode = graphed(call) if cuda else (call, "eager")
    samples = time_calls(timed, clock, reps=int(timing.get("reps", 30)),
                         warmup=int(timing.get("warmup", 5)), before_each=flusher)
    samples.sort()
    return {"status": "ok", "verdict": "correct", "time_ms": samples[len(samples) // 2],
            "min_ms": samples[0],
            "reps": len(samples), "timing_mode": mode, "max_error": verdict["max_error"],
            "first_call_s": first_s}


def graphed(call):
    """(the call to time, "graph" or "eager"): one call captured in a CUDA graph, so what is
    timed between the events is the kernel, not the op's host-side checks and planning
    (tens of microseconds: a fifth of the smaller shapes' time); eager where capture fails."""
    import torch

    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            call()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            call()
        graph.replay()
        torch.cuda.synchronize()
        return graph.replay, "graph"
    except Exception:                  # noqa: BLE001 - timed eagerly instead, and said so
        torch.cuda.synchronize()
        return call, "eager"


class HostClock:
    """time_calls' clock off the GPU (the interpreter's runs are host work)."""

    def marker(self):
        return time.perf_counter()

    def elapsed_ms(self, start, end) -> float:
        return (end - start) * 1e3

    def synchronize(self) -> None:
        pass


def serve(fd: int, device: str, lines) -> int:
    started = time.monotonic()
    import torch

    from argus.bench.timing import EventClock, L2Flusher

    os.environ.pop("ARGUS_ATTENTION_CONFIG", None)     # the job's knobs, nothing else
    if device.startswith("cuda"):
        clock, flusher = EventClock(device), L2Flusher(device)
        name = torch.cuda.get_device_name(torch.device(device))
    else:            # the CPU interpreter (ARGUS_INTERPRET=1): the protocol's tests
        clock, flusher, name = HostClock(), None, "interpreter"
    env = {"torch": torch.__version__, "device": device, "pid": os.getpid(),
           "device_name": name}
    _send(fd, {"phase": "ready", "seconds": time.monotonic() - started, "environment": env})
    for line in lines:
        if not line.strip():
            continue
        job = json.loads(line)
        _send(fd, {"phase": "started", "id": job.get("id")})
        t0 = time.monotonic()
        try:
            result = check_and_time(job, device, clock, flusher)
        except Exception as exc:
            result = {"status": "error", "reasons": [f"{type(exc).__name__}: {exc}"[:1500]],
                      "traceback": traceback.format_exc()[-3000:]}
        result["job_seconds"] = time.monotonic() - t0
        _send(fd, {"phase": "result", "id": job.get("id"), "result": result})
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    fd, device = int(argv[0]), (argv[1] if len(argv) > 1 else "cuda")
    return serve(fd, device, iter(sys.stdin.readline, ""))


if __name__ == "__main__":
    sys.exit(main())
