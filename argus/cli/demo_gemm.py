"""The GEMM part of `argus demo`: the library's DSL GEMM through every stage this machine
can run. Anywhere: the verifier (`argus check`), the CPU interpreter on a small shape with
tails (against NumPy), the
generated CUDA C++, and, with a CUDA compiler, the cubin with its resource check. On an
sm_90 GPU as well: argus.ops.matmul on three shapes against an fp64 reference, and its
speed next to torch.matmul's (a quick look; benchmarks are `argus bench gemm`)."""

from __future__ import annotations

import time

import numpy as np


def _check() -> tuple[bool, str]:
    from argus.ops.library import kernel_ir
    from argus.verify.driver import run

    start = time.perf_counter()
    report = run(kernel_ir("gemm", "gemm_nt"))
    findings = report.findings
    errors = [f for f in findings if f.severity == "error"]
    warnings = len(findings) - len(errors)
    text = (f"argus check: {report.verdict}, {len(errors)} errors, {warnings} warnings "
            f"({time.perf_counter() - start:.1f} s)")
    if errors:
        text += f"; first: {errors[0]}"
    elif not report.ok:
        text += f"; not proved: {report.unverified_reasons[0]}"
    return report.ok, text


def _interpret() -> tuple[bool, str]:
    from argus.interp.evaluator import interpret
    from argus.interp.machine.dtypes import BF16
    from argus.ops.library import kernel_ir

    ir = kernel_ir("gemm", "gemm_nt", BLOCKS=2)
    rng = np.random.default_rng(0)
    m, n, k = 200, 264, 136
    a = BF16.decode(BF16.encode(rng.standard_normal((m, k)).astype(np.float32)))
    b = BF16.decode(BF16.encode(rng.standard_normal((n, k)).astype(np.float32)))
    result = interpret(ir, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)},
                       seed=0)
    if not result.ok:
        return False, f"the interpreter stopped: {'; '.join(result.failures())[:200]}"
    got = np.asarray(result.outputs["C"], np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
    ok = bool(np.isfinite(got).all()) and err < 2 ** -7
    return ok, f"interpreter, {m}x{n}x{k} (tails in M, N and K): max relative error {err:.1e}"


def _build() -> tuple[bool, str]:
    from argus.ops.library import generated
    from argus.runtime.toolchain import find_tool, nvrtc_identity

    gen = generated("gemm", "gemm_nt")
    lines = len(gen.source.splitlines())
    if find_tool("nvcc") is None and nvrtc_identity() is None:
        return True, f"generated CUDA: {lines} lines (no CUDA compiler here: not built)"
    from argus.runtime import BuildOptions, build_kernel, check_kernel_binary

    entry = build_kernel(gen.source, BuildOptions())
    problems = check_kernel_binary(entry, {"kernel": gen.name, "max_registers": 168,
                                           "instructions": ["HGMMA", "UTMALDG", "SYNCS"]})
    k = entry.resources.kernels.get(gen.name)
    text = f"generated CUDA: {lines} lines -> sm_90a cubin ({entry.compiler.split(';')[0]}): "
    if k is None:     # this compiler printed no ptxas report for the kernel
        log = " ".join(entry.log.split())[:160]
        text += f"no resource report from the compiler (log: {log or 'empty'!r}), "
    else:
        text += f"{k.registers} registers, {k.spill_store_bytes} B spilled, "
    text += f"{gen.smem_bytes // 1024} KB shared memory"
    return not problems, text + ("" if not problems else f"; PROBLEMS: {problems}")


def _on_gpu() -> list[tuple[bool, str]]:
    import torch

    from argus.ops import matmul

    out = []
    for m, n, k, layout in [(1000, 1032, 520, "kn"), (4096, 4096, 4096, "kn"),
                            (4096, 4096, 4096, "nk")]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "kn" else \
            torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        matmul(a, b, out=c)
        ref = a.double() @ b.double()
        peer_err = (torch.matmul(a, b).double() - ref).abs().max().item()
        err = (c.double() - ref).abs().max().item()
        ok = bool(torch.isfinite(c).all()) and err <= 4 * max(peer_err, 1e-6)
        times = {}
        for who, fn in (("argus", lambda: matmul(a, b, out=c)),
                        ("cublas", lambda: torch.matmul(a, b))):
            for _ in range(3):
                fn()
            start, end = torch.cuda.Event(True), torch.cuda.Event(True)
            start.record()
            for _ in range(20):
                fn()
            end.record()
            torch.cuda.synchronize()
            times[who] = start.elapsed_time(end) / 20
        tflops = 2 * m * n * k / times["argus"] / 1e9
        out.append((ok, f"H200 run, {m}x{n}x{k} {layout}: max abs error {err:.3g} (cuBLAS "
                        f"{peer_err:.3g}); {tflops:.0f} TFLOP/s, {times['cublas'] / times['argus']:.2f}x "
                        "cuBLAS's speed (quick look)"))
    return out


def run_gemm_demo() -> int:
    """Prints one line per stage; returns the number of failed stages."""
    started = time.perf_counter()
    print("\nDSL GEMM (argus/kernels/gemm.py, the library kernel behind argus.ops.matmul):")
    stages = [_check(), _interpret(), _build()]
    try:
        import torch
        gpu = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
    except ImportError:
        gpu = False
    if gpu:
        stages += _on_gpu()
    else:
        stages.append((True, "GPU run: skipped (no sm_90 GPU here)"))
    for ok, text in stages:
        print(f"  {'ok  ' if ok else 'FAIL'} {text}")
    failed = sum(not ok for ok, _ in stages)
    print(f"  ({time.perf_counter() - started:.1f} s)")
    return failed
