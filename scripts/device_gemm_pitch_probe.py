"""Does a K whose rows are off the 128-byte grid cost argus.ops.matmul its speed? For each
shape: the product as given, from a view of A on the grid (a zero-padded buffer of K
rounded up to 64, its first K columns), from both operands padded, and with A copied into
that buffer on every call, against torch.matmul; medians of one run each
(device_gemm_msplit.timed). Prints a JSON line a shape."""

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import argus.ops  # noqa: E402
from device_gemm_msplit import timed  # noqa: E402  (scripts/ is sys.path[0])

SHAPES = [(1413, 4008, 4456), (2048, 4096, 4456), (1413, 4008, 4480), (4096, 4096, 3304)]


def probe(m, n, k) -> dict:
    def bf16(*shape, zeros=False):
        make = torch.zeros if zeros else torch.randn
        return make(*shape, device="cuda", dtype=torch.bfloat16)
    a, b, c = bf16(m, k), bf16(k, n), bf16(m, n, zeros=True)
    kp = -(-k // 64) * 64
    a_pad, b_pad = bf16(m, kp, zeros=True), bf16(kp, n, zeros=True)
    a_pad[:, :k] = a
    b_pad[:k] = b
    a_view = a_pad[:, :k]            # pitch kp, width k: rows on the 128-byte grid

    def copy_then_view():
        a_view.copy_(a)
        argus.ops.matmul(a_view, b, out=c)
    return {"shape": f"{m}x{n}x{k}", "torch_us": timed(lambda: torch.matmul(a, b)),
            "argus_us": timed(lambda: argus.ops.matmul(a, b, out=c)),
            "argus_aligned_view_us": timed(lambda: argus.ops.matmul(a_view, b, out=c)),
            "argus_padded_k_us": timed(lambda: argus.ops.matmul(a_pad, b_pad, out=c)),
            "argus_copy_a_then_view_us": timed(copy_then_view)}


def main():
    for shape in SHAPES:
        row = probe(*shape)
        print(json.dumps({k: round(v, 1) if isinstance(v, float) else v
                          for k, v in row.items()}), flush=True)


if __name__ == "__main__":
    main()
