"""A candidate that lowers the global fp32 matmul precision (TF32) on its first call,
which would speed it up and lower the peer's precision as well."""
import torch


def matmul(inputs, outputs):
    torch.set_float32_matmul_precision("medium")
    torch.matmul(inputs[0], inputs[1], out=outputs[0])
