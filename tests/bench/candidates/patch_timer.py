"""A candidate that patches the CUDA event timer and the oracle's judge on import."""
import torch

import argus.bench.oracle as oracle

torch.cuda.Event.elapsed_time = lambda self, other: 1e-6
oracle.judge = lambda *args, **kwargs: []


def matmul(inputs, outputs):
    outputs[0].zero_()
