"""A technique's DSL recipe: a real DSL kernel, with the parse overrides that specialise it.

    [recipe]
    kernel = "argus/kernels/gemm.py::gemm_nt"      # FILE.py::KERNEL, relative to the repo
    overrides = {S = 6, BN = 128, ACC = "wgmma_acc_m64n128"}
    codegen = true       # the Hopper backend generates it (GEMM); false: parse + verify only
    shows = "what in that kernel is the technique"

Recipes point at kernels the library or the examples ship (or a small kernel under
knowledge/recipes/), so they are the code that runs, not a copy. tests/agent/
test_recipes_compile.py parses each, runs the verifier (no error finding) and, where a CUDA
compiler exists, generates and builds the `codegen = true` ones: a recipe cannot rot.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
_TARGET = re.compile(r"^(argus|examples)/[A-Za-z0-9_/]+\.py::[A-Za-z_][A-Za-z0-9_]*$")
_FIELDS = {"kernel", "overrides", "codegen", "shows"}


@dataclass(frozen=True)
class Recipe:
    kernel: str                                   # "argus/kernels/gemm.py::gemm_nt"
    overrides: dict[str, Any] = field(default_factory=dict)
    codegen: bool = False
    shows: str = ""

    @property
    def file(self) -> Path:
        return REPO_ROOT / self.kernel.split("::")[0]

    @property
    def name(self) -> str:
        return self.kernel.split("::")[1]

    def key(self) -> tuple:
        return (self.kernel, tuple(sorted(self.overrides.items())))

    def describe(self) -> str:
        extra = ", ".join(f"{k}={v!r}" for k, v in sorted(self.overrides.items()))
        return f"{self.kernel}" + (f" [{extra}]" if extra else "")

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "overrides": dict(self.overrides),
                "codegen": self.codegen, "shows": self.shows}

    def parse(self):
        """The kernel's IR (parsed, never executed; overrides replace module constants)."""
        from argus.frontend import parse_file

        kernels = parse_file(self.file, dict(self.overrides))
        if self.name not in kernels:
            raise KeyError(f"{self.kernel}: no kernel {self.name!r}; the file defines "
                           f"{', '.join(kernels) or 'none'}")
        return kernels[self.name]


def recipe_problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["'recipe' must be a table: [recipe] kernel = \"FILE.py::KERNEL\" ..."]
    out = []
    unknown = set(data) - _FIELDS
    if unknown:
        out.append(f"unknown recipe fields {sorted(unknown)}; known: {sorted(_FIELDS)}")
    kernel = data.get("kernel")
    if not (isinstance(kernel, str) and _TARGET.match(kernel)):
        out.append(f"recipe kernel {kernel!r} must be \"argus/...py::KERNEL\" or "
                   f"\"examples/...py::KERNEL\"")
    elif not (REPO_ROOT / kernel.split("::")[0]).is_file():
        out.append(f"recipe kernel file {kernel.split('::')[0]} does not exist")
    overrides = data.get("overrides", {})
    if not isinstance(overrides, dict) or not all(
            isinstance(v, (int, str)) and not isinstance(v, bool) for v in overrides.values()):
        out.append("recipe overrides must be an inline table of NAME = int or string")
    if not isinstance(data.get("codegen", False), bool):
        out.append("recipe codegen must be true or false")
    if not isinstance(data.get("shows"), str) or not data["shows"].strip():
        out.append("recipe shows must say what in the kernel is the technique")
    return out


def build_recipe(data: dict | None) -> Recipe | None:
    if data is None:
        return None
    return Recipe(data["kernel"], dict(data.get("overrides", {})), bool(data.get("codegen", False)),
                  data["shows"].strip())
