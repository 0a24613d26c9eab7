"""A candidate that leaves a background thread running after it returns."""
import threading
import time

import torch


def _later():
    time.sleep(60)


def matmul(inputs, outputs):
    torch.matmul(inputs[0], inputs[1], out=outputs[0])
    if not any(t.name == "late-writer" for t in threading.enumerate()):
        threading.Thread(target=_later, name="late-writer", daemon=True).start()
