"""SASS inspection: per-function opcodes from cuobjdump and nvdisasm, spills, setmaxnreg counts."""

import pytest

from argus.runtime import sass as sass_module
from argus.runtime.sass import SassError, parse_sass
from argus.runtime.toolchain import find_tool
from runtime_kernels import requires_disassembler

CUOBJDUMP_SNIPPET = """
	code for sm_90a
		Function : demo
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                          /* 0x00000a00ff017b82 */
        /*0010*/               @P0 BRA 0x160 ;                                     /* 0x0000000000400947 */
        /*0020*/              @!P1 STL [R1], R2 ;                                  /* 0x0000000201007387 */
        /*0030*/                   USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xe8 ;        /* 0x000000e8000079c8 */
        /*0040*/                   HGMMA.64x64x16.F32.BF16 R152, gdesc[UR8], RZ, !UPT ;
        /*0050*/                   USETMAXREG.DEALLOC.CTAPOOL 0x28 ;               /* 0x00000028000079c8 */
"""


def test_parse_snippet():
    listing = parse_sass(CUOBJDUMP_SNIPPET)
    assert list(listing.functions) == ["demo"]
    assert listing.histogram("demo") == {"LDC": 1, "BRA": 1, "STL": 1, "USETMAXREG": 2, "HGMMA": 1}
    assert listing.has("HGMMA") and listing.has("HGMMA.64x64x16.F32.BF16") and not listing.has("UTMALDG")
    assert listing.has_spills("demo")  # the predicated STL counts
    assert listing.setmaxnreg_counts("demo") == [232, 40]


def test_unknown_function_is_a_clear_error():
    with pytest.raises(KeyError, match="no function 'nope'.*demo"):
        parse_sass(CUOBJDUMP_SNIPPET).instructions("nope")


@requires_disassembler
def test_every_wrapper_sass_has_no_local_memory(every_wrapper_nvcc):
    listing = every_wrapper_nvcc.sass()
    assert not listing.has_spills("every_wrapper")
    assert sorted(listing.setmaxnreg_counts("every_wrapper")) == [40, 232]


@requires_disassembler
def test_spilling_kernels_touch_local_memory(spilling_nvcc):
    listing = spilling_nvcc.sass()
    assert listing.has_spills("register_pressure") and listing.has_spills("local_array")


@pytest.mark.skipif(not (find_tool("cuobjdump") and find_tool("nvdisasm")), reason="needs both disassemblers")
def test_cuobjdump_and_nvdisasm_agree(every_wrapper_nvcc, monkeypatch):
    by_cuobjdump = every_wrapper_nvcc.sass().histogram("every_wrapper")
    real_find = find_tool
    monkeypatch.setattr(sass_module.toolchain, "find_tool", lambda n: None if n == "cuobjdump" else real_find(n))
    by_nvdisasm = sass_module.disassemble(every_wrapper_nvcc.cubin).histogram("every_wrapper")
    by_cuobjdump.pop("NOP", None), by_nvdisasm.pop("NOP", None)  # trailing padding differs
    assert by_cuobjdump == by_nvdisasm and by_cuobjdump["HGMMA"] > 0


def test_missing_disassembler_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(sass_module.toolchain, "find_tool", lambda name: None)
    with pytest.raises(SassError, match="pip install nvidia-cuda-cuobjdump"):
        sass_module.disassemble(b"\x7fELF")
