"""The GEMM protocol bug corpus (examples/bugs/gemm_protocol): each file names its bug,
the check id and line the verifier must report; helpers to run a file on the interpreter."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from argus.frontend.parse import parse_file

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "examples" / "bugs" / "gemm_protocol"
EXPECTED = re.compile(r"Expected: (protocol\.[\w-]+) at line (\d+)")


def bug_files() -> list[Path]:
    return sorted(CORPUS.glob("*.py"))


def expected(path: Path) -> tuple[str, int]:
    m = EXPECTED.search(path.read_text())
    assert m, f"{path.name}: the docstring names no 'Expected: protocol.<check> at line N'"
    return m.group(1), int(m.group(2))


def gemm(path: Path):
    return parse_file(path)["gemm"]


def run_gemm(kernel, M: int, N: int, K: int, seed: int):
    """One block (block 0) on random bf16 inputs; returns (run result, tile 0 right?)."""
    from argus.interp.evaluator import interpret
    from argus.interp.machine import round_to_bf16

    rng = np.random.default_rng(11)
    a = round_to_bf16(rng.standard_normal((M, K)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((N, K)).astype(np.float32))
    ref = round_to_bf16(a[:128] @ b[:256].T)
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((M, N), np.nan, np.float32)},
                       seed=seed, blocks=[0])
    right = np.allclose(result.outputs["C"][:128, :256], ref, rtol=2 ** -7, atol=0.1)
    return result, right
