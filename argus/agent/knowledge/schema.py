"""One technique of the knowledge base: its fields and their validation.

A technique file (techniques/<id>.toml) says when to apply an optimisation (ops, shape
classes, profile signals, preconditions), what to state with it (invariants), what it
gains according to which public source (sources: url + what it says), what goes wrong
(pitfalls), and which configuration knobs it maps to. `moves` are the concrete knob
changes the embedded planner tries for it: a value, or "+1", "-1", "*2", "/2" relative to
the current configuration.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from argus.agent.gemm_config import KNOB_BY_NAME
from argus.agent.knowledge.recipe import Recipe, build_recipe, recipe_problems

OPS = ("gemm", "attention", "moe")
SHAPE_CLASSES = ("any", "large", "medium", "skinny", "small-mn", "deep-k", "long-seq",
                 "short-seq", "decode", "causal", "prefill", "fine-grained")
RELATIVE = re.compile(r"^[+\-*/]\d+$")
_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_STR_LISTS = ("ops", "tags", "shape_classes", "signals", "preconditions", "pitfalls",
              "invariants", "knobs")
_STRS = ("id", "title", "summary", "when", "expected_gain")


@dataclass(frozen=True)
class Source:
    url: str
    says: str


@dataclass(frozen=True)
class Technique:
    id: str
    title: str
    ops: tuple[str, ...]
    tags: tuple[str, ...]
    shape_classes: tuple[str, ...]
    signals: tuple[str, ...]
    summary: str
    when: str
    preconditions: tuple[str, ...]
    pitfalls: tuple[str, ...]
    invariants: tuple[str, ...]
    expected_gain: str
    knobs: tuple[str, ...]
    moves: tuple[dict, ...]
    sources: tuple[Source, ...]
    example: str | None
    path: str
    recipe: Recipe | None = None

    def to_json(self, brief: bool = False) -> dict[str, Any]:
        out = {"id": self.id, "title": self.title, "ops": list(self.ops),
               "summary": self.summary, "when": self.when, "knobs": list(self.knobs),
               "expected_gain": self.expected_gain,
               "sources": [{"url": s.url, "says": s.says} for s in self.sources]}
        if not brief:
            out.update({"tags": list(self.tags), "shape_classes": list(self.shape_classes),
                        "signals": list(self.signals), "preconditions": list(self.preconditions),
                        "pitfalls": list(self.pitfalls), "invariants": list(self.invariants),
                        "moves": [dict(m) for m in self.moves], "example": self.example,
                        "recipe": self.recipe.to_json() if self.recipe else None})
        return out


def validate(data: dict, stem: str) -> list[tuple[str, str]]:
    """(field, problem) for each thing wrong with one parsed technique file."""
    problems: list[tuple[str, str]] = []
    for key in _STRS:
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append((key, f"'{key}' must be a non-empty string"))
    for key in _STR_LISTS:
        value = data.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append((key, f"'{key}' must be a list of strings"))
    if problems:
        return problems
    if not _ID.match(data["id"]):
        problems.append(("id", f"id {data['id']!r} must be lower-case words joined by '-'"))
    elif data["id"] != stem:
        problems.append(("id", f"id {data['id']!r} must equal the file name {stem!r}"))
    if not data["ops"] or set(data["ops"]) - set(OPS):
        problems.append(("ops", f"ops must be a non-empty subset of {list(OPS)}"))
    bad = set(data["shape_classes"]) - set(SHAPE_CLASSES)
    if not data["shape_classes"] or bad:
        problems.append(("shape_classes", f"unknown shape classes {sorted(bad)}; "
                                          f"known: {list(SHAPE_CLASSES)}"))
    for knob in data["knobs"]:
        if knob not in KNOB_BY_NAME and not re.match(r"^(attention|moe)\.[a-z_0-9]+$", knob):
            problems.append(("knobs", f"knob {knob!r} is neither a GEMM knob "
                                      f"({', '.join(KNOB_BY_NAME)}) nor 'attention.x'/'moe.x'"))
    sources = data.get("sources")
    if not isinstance(sources, list) or not sources:
        problems.append(("sources", "at least one [[sources]] entry (url + says) is required"))
    else:
        for s in sources:
            if not (isinstance(s, dict) and isinstance(s.get("url"), str)
                    and s["url"].startswith("https://") and isinstance(s.get("says"), str)
                    and s["says"].strip()):
                problems.append(("sources", "each source needs url = \"https://...\" and a "
                                            "non-empty says = \"what it states\""))
    moves = data.get("moves", [])
    if not isinstance(moves, list):
        problems.append(("moves", "'moves' must be a list of inline tables"))
        moves = []
    for move in moves:
        problems += [("moves", p) for p in _move_problems(move)]
    example = data.get("example")
    if example is not None and not (isinstance(example, str) and example.endswith(".py")):
        problems.append(("example", "'example' must be the path of a .py file in the repo"))
    if "recipe" in data:
        problems += [("recipe", p) for p in recipe_problems(data["recipe"])]
    unknown = set(data) - set(_STRS) - set(_STR_LISTS) - {"sources", "moves", "example", "recipe"}
    if unknown:
        problems.append((sorted(unknown)[0], f"unknown fields {sorted(unknown)}"))
    return problems


def _move_problems(move: Any) -> list[str]:
    if not isinstance(move, dict) or not move:
        return [f"a move must be a non-empty inline table of knob = value, got {move!r}"]
    out = []
    for name, value in move.items():
        knob = KNOB_BY_NAME.get(name)
        if knob is None:
            out.append(f"move names unknown GEMM knob {name!r}")
        elif isinstance(value, str) and RELATIVE.match(value):
            if knob.kind is not int:
                out.append(f"relative move {value!r} on non-integer knob {name}")
        elif value not in knob.values or type(value) is not knob.kind:
            out.append(f"move {name} = {value!r} is not admissible "
                       f"({', '.join(map(str, knob.values))})")
    return out


def build(data: dict, path: str) -> Technique:
    return Technique(
        id=data["id"], title=data["title"], ops=tuple(data["ops"]), tags=tuple(data["tags"]),
        shape_classes=tuple(data["shape_classes"]), signals=tuple(data["signals"]),
        summary=data["summary"].strip(), when=data["when"].strip(),
        preconditions=tuple(data["preconditions"]), pitfalls=tuple(data["pitfalls"]),
        invariants=tuple(data["invariants"]), expected_gain=data["expected_gain"],
        knobs=tuple(data["knobs"]), moves=tuple(dict(m) for m in data.get("moves", [])),
        sources=tuple(Source(s["url"], s["says"]) for s in data["sources"]),
        example=data.get("example"), path=path, recipe=build_recipe(data.get("recipe")))
