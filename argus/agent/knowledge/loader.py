"""Reads and validates the technique files; an error names file:line and the fix."""
from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path

from argus.agent.knowledge.schema import Technique, build, validate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TECHNIQUES_DIR = Path(__file__).parent / "techniques"


class KnowledgeError(ValueError):
    """A technique file that does not parse or does not validate."""


def _line_of(text: str, key: str) -> int:
    match = re.search(rf"^\s*(\[\[?)?{re.escape(key)}\b", text, re.M)
    return text[:match.start()].count("\n") + 1 if match else 1


def load_file(path: Path) -> Technique:
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        line = re.search(r"line (\d+)", str(err))
        raise KnowledgeError(f"{path}:{line.group(1) if line else 1}: not valid TOML: {err}; "
                             f"fix the syntax (strings in quotes, inline tables on one line)"
                             ) from None
    problems = validate(data, path.stem)
    if problems:
        key, message = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise KnowledgeError(f"{path}:{_line_of(text, key)}: {message}{more}")
    return build(data, str(path))


def load_dir(directory: Path) -> tuple[Technique, ...]:
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise KnowledgeError(f"{directory}: no technique files (*.toml) found")
    techniques = tuple(load_file(p) for p in files)
    seen: dict[str, str] = {}
    for t in techniques:
        if t.id in seen:
            raise KnowledgeError(f"{t.path}:1: id {t.id!r} also used by {seen[t.id]}")
        seen[t.id] = t.path
    return techniques


@lru_cache(maxsize=4)
def load_knowledge(directory: str | None = None) -> tuple[Technique, ...]:
    """Every technique shipped with the package (or in `directory`), validated."""
    return load_dir(Path(directory) if directory else TECHNIQUES_DIR)
