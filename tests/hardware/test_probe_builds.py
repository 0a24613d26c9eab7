"""The layout probe compiles for sm_90a and uses the instructions it claims to probe.

Runs on any machine with nvcc (no GPU needed); skipped where nvcc is absent.
The probe itself runs only on a Hopper GPU (see docs/hardware-probe.md).
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import gen_wgmma_asm  # noqa: E402


def _cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:  # the nvidia-cuda-cuobjdump wheel (pulled in by torch) ships one
        import nvidia.cu13  # type: ignore

        candidate = Path(list(nvidia.cu13.__path__)[0]) / "bin" / "cuobjdump"
        return str(candidate) if candidate.exists() else None
    except ImportError:
        return None


def test_generated_header_is_current():
    assert (HERE / "wgmma_asm.cuh").read_text() == gen_wgmma_asm.header(), (
        "wgmma_asm.cuh is stale: run python3 tests/hardware/gen_wgmma_asm.py"
    )


@pytest.fixture(scope="module")
def sass(tmp_path_factory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH")
    binary = tmp_path_factory.mktemp("probe") / "hopper_probe"
    subprocess.run(
        ["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O2", "-std=c++17",
         "-o", str(binary), str(HERE / "hopper_probe.cu")],
        check=True, capture_output=True, text=True,
    )
    tool = _cuobjdump()
    if tool is None:
        pytest.skip("cuobjdump not found (neither on PATH nor in the nvidia-cu13 wheel)")
    return subprocess.run([tool, "-sass", str(binary)], check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("n", list(range(8, 257, 8)))
def test_every_accumulator_width_is_an_hgmma(sass, n):
    assert f"HGMMA.64x{n}x16.F32.BF16" in sass


@pytest.mark.parametrize("opcode", ["QGMMA.64x32x32.F32.E4M3.E4M3", "LDSM.16.M88.4", "LDSM.16.MT88",
                                    "STSM.16.M88.2", "STSM.16.MT88.4", "UTMALDG.2D"])
def test_probe_uses_the_instruction(sass, opcode):
    assert opcode in sass


def test_no_local_memory_traffic(sass):
    assert "LDL" not in sass and "STL" not in sass, "a register array spilled to local memory"
