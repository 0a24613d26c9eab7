"""A stand-in for argus.ops.matmul (CPU, torch) that records the knobs it was called with."""
import json
import os

import torch


def matmul(a, b, *, out, **knobs):
    torch.matmul(a, b, out=out)
    record = os.environ.get("FAKE_BACKEND_RECORD")
    if record:
        with open(record, "w") as f:
            json.dump(knobs, f)


def misbehaving(a, b, *, out, **knobs):
    """Like `matmul`, but at BN=64 does what FAKE_BACKEND_MISBEHAVE says: "hang" (sleeps),
    "crash" (the process exits at once), "tamper" (rebinds time.perf_counter), "partial"
    (writes only the first half of the rows), "patch_search" (rebinds the search mode's
    check, a harness module of the agent's own)."""
    if knobs.get("BN") == 64:
        how = os.environ.get("FAKE_BACKEND_MISBEHAVE", "")
        if how == "partial":
            rows = out.shape[0] // 2
            torch.matmul(a[:rows], b, out=out[:rows])
            return
        if how == "patch_search":
            from argus.agent.evaluators import search_mode
            search_mode.check_once = lambda *args, **kw: None
        if how == "hang":
            import time
            time.sleep(3600)
        elif how == "crash":
            os._exit(9)
        elif how == "tamper":
            import time
            time.perf_counter = lambda: 0.0
    matmul(a, b, out=out, **knobs)
