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
    "crash" (the process exits at once), "tamper" (rebinds time.perf_counter)."""
    if knobs.get("BN") == 64:
        how = os.environ.get("FAKE_BACKEND_MISBEHAVE", "")
        if how == "hang":
            import time
            time.sleep(3600)
        elif how == "crash":
            os._exit(9)
        elif how == "tamper":
            import time
            time.perf_counter = lambda: 0.0
    matmul(a, b, out=out, **knobs)
