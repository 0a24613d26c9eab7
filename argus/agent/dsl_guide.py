"""A compact guide to the DSL for a model's context, generated from the code itself.

Sections: every surface function of argus.lang grouped by family, with its signature and
the first paragraph of its docstring (the frontend's own declarations), then the example
kernels that parse as the DSL (the shortest in full, the rest as one-line pointers). It
is rebuilt on each call, so it cannot drift from the code; `max_chars` bounds its size.
"""
from __future__ import annotations

import inspect
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEFAULT_MAX_CHARS = 16000

HEADER = """# Argus DSL, compact guide (generated from argus.lang and examples/)
Kernels are Python functions decorated with @kernel(grid=..., block=..., cluster=...);
the body is parsed from source, never executed. Tensor parameters: Tensor["M", "K", bf16];
compile-time constants: NAME: const = 128. You state the choreography (tile coordinates,
stages and barrier phases, layouts, roles); the compiler derives addresses, descriptors
and PTX. tag/tag_assert state data-flow invariants that `argus check` verifies."""


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "").split("\n\n")[0]
    return " ".join(text.split())


def surface_section() -> list[str]:
    import argus.lang as lang

    by_family: dict[str, list[str]] = {}
    for name, fn in sorted(lang.surface_functions().items()):
        target = getattr(fn, "__wrapped__", fn)
        signature = f"{name}{inspect.signature(target)}"
        by_family.setdefault(fn.__argus_surface__, []).append(
            f"- {signature}: {_first_paragraph(target.__doc__)}")
    lines = []
    for family in lang.FAMILIES:
        if family in by_family:
            lines += [f"## {family}", *by_family[family]]
    return lines


def verified_examples() -> list[tuple[Path, str]]:
    """(path, first docstring line) of each example that parses as the DSL."""
    from argus.frontend import parse_file

    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        try:
            if not parse_file(path):
                continue
        except Exception:       # an example that does not parse is left out, not shown
            continue
        module_doc = path.read_text(encoding="utf-8").split('"""')
        summary = _first_paragraph(module_doc[1]) if len(module_doc) > 2 else ""
        out.append((path, summary))
    return out


def build_guide(max_chars: int = DEFAULT_MAX_CHARS, full_examples: int = 1) -> str:
    parts = [HEADER, "\n".join(surface_section())]
    examples = sorted(verified_examples(), key=lambda e: e[0].stat().st_size)
    shown = 0
    listing = ["## Verified examples (parse as the DSL)"]
    for path, summary in examples:
        source = path.read_text(encoding="utf-8")
        block = f"### examples/{path.name}\n```python\n{source.rstrip()}\n```"
        used = sum(len(p) for p in parts) + len("\n".join(listing))
        if shown < full_examples and used + len(block) < max_chars:
            listing.append(block)
            shown += 1
        else:
            listing.append(f"- examples/{path.name}: {summary}")
    parts.append("\n".join(listing))
    guide = "\n\n".join(parts) + "\n"
    return guide if len(guide) <= max_chars else guide[:max_chars - 40] + "\n... [guide cut]\n"
