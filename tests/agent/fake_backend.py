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
