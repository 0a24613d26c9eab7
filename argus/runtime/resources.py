"""The ptxas resource report of a build, and the checks CI runs on every library kernel.

ptxas -v prints, per entry function, registers, barriers, static shared memory, stack frame
and spill bytes, plus performance notes such as "wgmma ... serialized" (C7510) or setmaxnreg
being ignored (C7508). The report is parsed once at build time and stored in the cache entry;
check_kernel_binary combines it with the SASS to list what is wrong with a kernel.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CUMULATIVE_STACK = re.compile(r"(\d+) bytes cumulative stack size")
_CODE = re.compile(r"\((C\d{4})\)")
_IN_FUNCTION = re.compile(r"(?:in|for) (?:the )?(?:function|entry function) '([^']+)'")
WGMMA_SERIALIZED = "wgmma.mma_async instructions are serialized"


@dataclass
class KernelResources:
    """What ptxas reports for one entry function."""

    name: str
    registers: int = 0
    barriers: int = 0
    shared_bytes: int = 0  # static shared memory; dynamic shared memory is the launch's business
    stack_frame_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    cumulative_stack_bytes: int = 0

    @property
    def spills(self) -> bool:
        return self.spill_store_bytes > 0 or self.spill_load_bytes > 0


@dataclass
class PtxasDiagnostic:
    """A ptxas note or warning: its code (C7510...), the text, and the function it names."""

    message: str
    code: str | None = None
    function: str | None = None

    @property
    def wgmma_serialized(self) -> bool:
        return WGMMA_SERIALIZED in self.message

    @property
    def injected_wgmma_wait(self) -> bool:
        """ptxas added a warpgroup.arrive/wait (C7517/C7519): the code lacks an accumulator fence."""
        return self.code in ("C7517", "C7519") or "is injected" in self.message and "GMMA" in self.message

    @property
    def setmaxnreg_ignored(self) -> bool:
        return self.code == "C7508" or ("setmaxnreg" in self.message and "ignored" in self.message)


@dataclass
class ResourceReport:
    kernels: dict[str, KernelResources] = field(default_factory=dict)
    diagnostics: list[PtxasDiagnostic] = field(default_factory=list)

    def diagnostics_for(self, kernel: str) -> list[PtxasDiagnostic]:
        """The diagnostics naming `kernel`, and those naming no function at all."""
        return [d for d in self.diagnostics if d.function in (None, kernel)]

    def to_json(self) -> dict:
        return {"kernels": {k: asdict(v) for k, v in self.kernels.items()},
                "diagnostics": [asdict(d) for d in self.diagnostics]}

    @classmethod
    def from_json(cls, data: dict) -> "ResourceReport":
        return cls({k: KernelResources(**v) for k, v in data.get("kernels", {}).items()},
                   [PtxasDiagnostic(**d) for d in data.get("diagnostics", [])])


def parse_ptxas_report(log: str) -> ResourceReport:
    """Parse ptxas -v output (nvcc's stderr or NVRTC's program log)."""
    report = ResourceReport()
    entry = None  # the entry function whose "Used ..." line comes next
    properties_of = None  # the function whose "stack frame" line comes next
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            entry = m.group(1)
            report.kernels.setdefault(entry, KernelResources(entry))
            continue
        if m := _PROPERTIES.search(line):
            properties_of = m.group(1)
            continue
        if m := _FRAME.search(line):
            if properties_of is not None and properties_of in report.kernels:
                k = report.kernels[properties_of]
                k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes = map(int, m.groups())
            properties_of = None
            continue
        if (m := _USED.search(line)) and entry is not None:
            k = report.kernels[entry]
            k.registers = int(m.group(1))
            k.barriers = _int(_BARRIERS, line)
            k.shared_bytes = _int(_SMEM, line)
            k.cumulative_stack_bytes = _int(_CUMULATIVE_STACK, line)
            continue
        if _CODE.search(line) or re.search(r"ptxas\s+warning", line):
            message = line.split(":", 1)[1].strip() if ":" in line else line.strip()
            code = _CODE.search(line)
            func = _IN_FUNCTION.search(line)
            report.diagnostics.append(PtxasDiagnostic(message, code and code.group(1), func and func.group(1)))
    return report


def _int(pattern: re.Pattern, line: str) -> int:
    m = pattern.search(line)
    return int(m.group(1)) if m else 0


EXPECT_KEYS = {
    "kernel": "the entry function to check (default: every entry in the report)",
    "max_registers": "registers per thread at entry, at most",
    "role_registers": "{role: count}: each count must be requested by a setmaxnreg in the SASS",
    "max_shared_bytes": "static shared memory per block, at most (the plan's number)",
    "max_stack_bytes": "stack frame bytes, at most",
    "allow_spills": "accept spill bytes and LDL/STL (default False)",
    "allow_wgmma_serialized": "accept the 'wgmma serialized' warning (default False)",
    "allow_injected_wgmma_waits": "accept ptxas-injected warpgroup.arrive/wait (default False)",
    "instructions": "base opcodes that must appear in the SASS, e.g. ['HGMMA', 'UTMALDG', 'SYNCS']",
}


def check_kernel_binary(entry, expect: dict | None = None) -> list[str]:
    """Every problem with a built kernel (a CacheEntry), as a clear sentence; [] when it is clean."""
    expect = dict(expect or {})
    unknown = sorted(set(expect) - set(EXPECT_KEYS))
    if unknown:
        raise ValueError(f"unknown expectation(s) {unknown}; valid ones: "
                         + "; ".join(f"{k}: {v}" for k, v in EXPECT_KEYS.items()))
    report = entry.resources
    names = [expect["kernel"]] if "kernel" in expect else sorted(report.kernels)
    if not names:
        return ["the ptxas report names no entry function: was the build run with ptxas -v?"]
    needs_sass = (not expect.get("allow_spills", False)) or expect.get("instructions") or expect.get("role_registers")
    sass, problems = None, []
    if needs_sass:
        from argus.runtime.sass import SassError

        try:
            sass = entry.sass()
        except SassError as err:
            problems.append(str(err))
    for name in names:
        problems += _check_one(name, report, sass, expect)
    return problems


def _check_one(name: str, report: ResourceReport, sass, expect: dict) -> list[str]:
    if name not in report.kernels:
        return [f"kernel {name!r} is not in the ptxas report (it has {sorted(report.kernels)})"]
    k, problems = report.kernels[name], []
    if "max_registers" in expect and k.registers > expect["max_registers"]:
        problems.append(f"{name}: uses {k.registers} registers per thread, over the budget of "
                        f"{expect['max_registers']}")
    if "max_shared_bytes" in expect and k.shared_bytes > expect["max_shared_bytes"]:
        problems.append(f"{name}: uses {k.shared_bytes} bytes of static shared memory, over the "
                        f"planned {expect['max_shared_bytes']}")
    if "max_stack_bytes" in expect and k.stack_frame_bytes > expect["max_stack_bytes"]:
        problems.append(f"{name}: has a {k.stack_frame_bytes}-byte stack frame, over "
                        f"{expect['max_stack_bytes']}")
    if not expect.get("allow_spills", False):
        if k.spills:
            problems.append(f"{name}: spills ({k.spill_store_bytes} bytes stored, {k.spill_load_bytes} "
                            "loaded): lower register pressure or raise the register budget")
        if sass is not None and name in sass.functions and sass.has_spills(name):
            problems.append(f"{name}: the SASS touches local memory (LDL/STL): a spill or a register "
                            "array indexed at run time")
    diags = report.diagnostics_for(name)
    if not expect.get("allow_wgmma_serialized", False):
        for d in diags:
            if d.wgmma_serialized:
                problems.append(f"{name}: ptxas serialized the wgmma pipeline: {d.message}")
    if not expect.get("allow_injected_wgmma_waits", False):
        for d in diags:
            if d.injected_wgmma_wait:
                problems.append(f"{name}: ptxas had to inject a warpgroup wait or arrive (fence the "
                                f"accumulators around wgmma): {d.message}")
    role_registers = expect.get("role_registers") or {}
    if role_registers:
        for d in diags:
            if d.setmaxnreg_ignored:
                problems.append(f"{name}: ptxas ignored setmaxnreg: {d.message}")
        if sass is not None and name in sass.functions:
            requested = set(sass.setmaxnreg_counts(name))
            for role, count in sorted(role_registers.items()):
                if count not in requested:
                    problems.append(f"{name}: role {role!r} should run with {count} registers, but no "
                                    f"setmaxnreg in the SASS requests it (found {sorted(requested)})")
    if sass is not None:
        if name not in sass.functions:
            problems.append(f"{name}: not found in the SASS (functions: {sorted(sass.functions)})")
        else:
            for opcode in expect.get("instructions", ()):
                if not sass.has(opcode, name):
                    problems.append(f"{name}: intended instruction {opcode} is missing from the SASS")
    return problems
