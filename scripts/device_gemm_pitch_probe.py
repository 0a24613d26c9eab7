import sys, json
from pathlib import Path
import torch
sys.path.insert(0, '.')
sys.path.insert(0, 'scripts')
import argus.ops
from device_gemm_msplit import timed
for m, n, k in [(1413, 4008, 4456), (2048, 4096, 4456), (1413, 4008, 4480), (4096, 4096, 3304)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    kp = (k + 63) // 64 * 64
    ab = torch.zeros(m, kp, device="cuda", dtype=torch.bfloat16); ab[:, :k] = a
    bb = torch.zeros(kp, n, device="cuda", dtype=torch.bfloat16); bb[:k] = b
    av = ab[:, :k]           # pitch kp, width k: a view on the 128-byte grid
    r = {"shape": f"{m}x{n}x{k}", "torch": timed(lambda: torch.matmul(a, b)),
         "argus": timed(lambda: argus.ops.matmul(a, b, out=c)),
         "argus_aligned_view": timed(lambda: argus.ops.matmul(av, b, out=c)),
         "argus_padded_k": timed(lambda: argus.ops.matmul(ab, bb, out=c))}
    def with_copy():
        ab[:, :k].copy_(a)
        argus.ops.matmul(av, b, out=c)
    r["argus_copy_a_then_view"] = timed(with_copy)
    print(json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
