"""An honest matmul candidate (destination passing)."""
import torch


def matmul(inputs, outputs):
    a, b = inputs
    torch.matmul(a, b, out=outputs[0])
