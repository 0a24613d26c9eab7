"""The IR's layout names resolve to argus.layout objects that fit the IR's shapes."""

from pathlib import Path

from argus.frontend import parse_file
from argus.ir.layouts import fragment_layout, smem_operand_layout
from argus.ir.types import FragmentType, SmemTileType

GEMM = Path(__file__).resolve().parents[2] / "examples" / "gemm.py"


def _types(kernel, cls):
    return [r.type for op in kernel.walk() for r in op.results if isinstance(r.type, cls)]


def test_gemm_accumulator_resolves_to_its_atom():
    k = parse_file(GEMM)["gemm"]
    acc = next(t for t in _types(k, FragmentType) if t.layout == "wgmma_acc_m64n256")
    tv = fragment_layout(acc)
    assert tuple(tv.tile) == acc.shape
    assert tv.threads * tv.values == acc.shape[0] * acc.shape[1]


def test_gemm_smem_operands_are_bijections_onto_their_bytes():
    k = parse_file(GEMM)["gemm"]
    for t in {t for t in _types(k, SmemTileType) if t.shape[0] == 64 or t.shape == (256, 64)}:
        op = smem_operand_layout(t)
        offsets = {op.byte_offset(m, kk) for m in range(t.shape[0]) for kk in range(t.shape[1])}
        assert offsets == set(range(0, t.nbytes, 2)), t
