"""A wgmma's k steps share their tile's descriptor: the generator writes step k's operand as
smem_descriptor_at(tile address, byte offset, fields) (argus_descriptor.cuh: the tile's
descriptor plus offset >> 4, which is smem_descriptor(address + offset, fields) for every
shared address: the 14-bit start field cannot carry below 2^18 bytes). Written back in the
per-step form, the generated kernel is the one the generator wrote before the change
(scripts/ab/descriptor_per_step.py, the device A/B's old side), for the library GEMM and
attention."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from argus.codegen import generate
from argus.codegen.lower import wgmma
from argus.frontend import parse_file

ROOT = Path(__file__).resolve().parents[2]
AT = re.compile(r"argus::smem_descriptor_at\(([^;]*?), (\d+), (0x[0-9a-f]+ull)\)")
KERNELS = [("gemm.py", "gemm_nt", {}), ("gemm.py", "gemm_nn", {}),
           ("attention.py", "attention_bhsd", {"HD": 128})]


def _per_step(monkeypatch):
    """wgmma._descriptor replaced by the donor's (each step's descriptor from its address)."""
    donor = (ROOT / "scripts" / "ab" / "descriptor_per_step.py").read_text()
    scope = dict(vars(wgmma))
    exec(compile(donor, "descriptor_per_step.py", "exec"), scope)
    monkeypatch.setattr(wgmma, "_descriptor", scope["_descriptor"])


@pytest.mark.parametrize("path, name, overrides", KERNELS)
def test_the_shared_descriptor_is_the_per_step_one_rewritten(monkeypatch, path, name,
                                                              overrides):
    kernel = lambda: parse_file(ROOT / "argus" / "kernels" / path,
                                overrides=overrides or None)[name]
    shared = generate(kernel()).source
    assert AT.search(shared), "no k step past the first"
    with monkeypatch.context() as m:
        _per_step(m)
        per_step = generate(kernel()).source
    assert "smem_descriptor_at" not in per_step
    rewritten = AT.sub(lambda g: f"argus::smem_descriptor({g[1]} + {g[2]}, {g[3]})", shared)
    assert rewritten == per_step


def test_a_tiles_steps_share_its_first_steps_address():
    code = generate(parse_file(ROOT / "argus" / "kernels" / "gemm.py")["gemm_nt"]).source
    firsts = set(re.findall(r"argus::smem_descriptor\(([^;]*?), 0x[0-9a-f]+ull\)", code))
    for base, offset, _ in AT.findall(code):
        assert base in firsts and int(offset) % 16 == 0 and int(offset) > 0, (base, offset)
