"""SASS of a cubin (cuobjdump -sass, or nvdisasm), split per function into opcodes.

What the checks need from the machine code: which instructions are there (HGMMA, UTMALDG,
SYNCS...), whether local memory is touched (LDL/STL: spills or a register array that moved to
the stack), and the register counts each setmaxnreg asks for (USETMAXREG).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from argus.runtime import toolchain

_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-fA-F]{4,}\*/\s+(?P<text>[^;]*?)\s*;")
_PREDICATE = re.compile(r"^@!?U?P(?:T|\d+)\s+")
_CUOBJDUMP_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_NVDISASM_FUNCTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_NVDISASM_SECTION = re.compile(r"^\s*\.section\s")
SPILL_OPCODES = ("LDL", "STL")


class SassError(RuntimeError):
    """The cubin could not be disassembled."""


@dataclass(frozen=True)
class Instruction:
    opcode: str  # with modifiers, e.g. HGMMA.64x128x16.F32.BF16
    text: str  # the whole instruction without the predicate

    @property
    def base(self) -> str:
        """The opcode without modifiers: HGMMA, SYNCS, LDSM."""
        return self.opcode.split(".", 1)[0]


@dataclass
class SassListing:
    """Instructions per function, with the raw text for reading."""

    text: str
    functions: dict[str, list[Instruction]] = field(default_factory=dict)

    def instructions(self, function: str | None = None) -> list[Instruction]:
        if function is None:
            return [i for insts in self.functions.values() for i in insts]
        if function not in self.functions:
            raise KeyError(f"no function {function!r} in the SASS; it has {sorted(self.functions)}")
        return self.functions[function]

    def histogram(self, function: str | None = None) -> Counter:
        """How often each base opcode occurs (in one function, or in all)."""
        return Counter(i.base for i in self.instructions(function))

    def has(self, opcode: str, function: str | None = None) -> bool:
        """Whether an instruction with this base opcode (or this exact full opcode) is present."""
        return any(i.base == opcode or i.opcode == opcode for i in self.instructions(function))

    def has_spills(self, function: str | None = None) -> bool:
        """Local-memory traffic (LDL/STL): register spills or a stack-allocated array."""
        return any(i.base in SPILL_OPCODES for i in self.instructions(function))

    def setmaxnreg_counts(self, function: str | None = None) -> list[int]:
        """The register counts the USETMAXREG instructions request, in program order."""
        counts = []
        for inst in self.instructions(function):
            if inst.base == "USETMAXREG":
                hexes = re.findall(r"0x[0-9a-fA-F]+", inst.text)
                if hexes:
                    counts.append(int(hexes[-1], 16))
        return counts


def parse_sass(text: str) -> SassListing:
    """Split cuobjdump or nvdisasm output into functions and instructions."""
    listing = SassListing(text)
    current = None
    for line in text.splitlines():
        header = _CUOBJDUMP_FUNCTION.match(line) or _NVDISASM_FUNCTION.match(line)
        if header:
            current = header.group(1)
            listing.functions.setdefault(current, [])
            continue
        if _NVDISASM_SECTION.match(line):  # a data section of nvdisasm's listing
            current = None
            continue
        m = _INSTRUCTION.match(line)
        if m is None or current is None:
            continue
        body = _PREDICATE.sub("", m["text"].strip())
        if not body:
            continue
        listing.functions[current].append(Instruction(body.split()[0], body))
    return listing


def disassemble(cubin: bytes) -> SassListing:
    """The SASS of `cubin`, through cuobjdump -sass or else nvdisasm."""
    tools = [(toolchain.find_tool("cuobjdump"), ["-sass"]), (toolchain.find_tool("nvdisasm"), [])]
    tools = [(path, flags) for path, flags in tools if path]
    if not tools:
        raise SassError("cannot inspect SASS: neither cuobjdump nor nvdisasm was found; "
                        "pip install nvidia-cuda-cuobjdump (or put the CUDA toolkit's bin on PATH)")
    with tempfile.TemporaryDirectory(prefix="argus-sass-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        errors = []
        for tool, flags in tools:
            proc = subprocess.run([tool, *flags, str(path)], capture_output=True, text=True, timeout=300)
            if proc.returncode == 0:
                return parse_sass(proc.stdout)
            errors.append(f"{tool}: {proc.stderr.strip()}")
    raise SassError("could not disassemble the cubin:\n" + "\n".join(errors))
