"""Search/replace edit blocks: a reply may change the current best kernel instead of
rewriting it whole.

    <<<<<<< SEARCH
    lines of the current best kernel, exactly
    =======
    the lines that replace them
    >>>>>>> REPLACE

Blocks apply in order, each to the result of the one before. A SEARCH text must occur
exactly once (exactly, or else once with each line's surrounding whitespace ignored); a
block that does not match, or matches several places, is an EditError naming the block
and its first line, for the model to fix.
"""
from __future__ import annotations

import re

_BLOCK = re.compile(r"^<{5,9} SEARCH[ \t]*\n(.*?)^={5,9}[ \t]*\n(.*?)^>{5,9} REPLACE[ \t]*$",
                    re.S | re.M)
_OPEN = re.compile(r"^<{5,9} SEARCH", re.M)


class EditError(ValueError):
    """An edit block that cannot be applied; the message says which and why."""


def parse_edits(text: str) -> list[tuple[str, str]]:
    """The (search, replace) pairs of a reply, in order; [] when it has none."""
    blocks = [(m.group(1), m.group(2)) for m in _BLOCK.finditer(text)]
    opened = len(_OPEN.findall(text))
    if opened != len(blocks):
        raise EditError(f"{opened} SEARCH markers but {len(blocks)} complete blocks: close each "
                        f"block with a '=======' line and a '>>>>>>> REPLACE' line")
    return blocks


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:80]


def _loose_span(source: str, search: str) -> list[tuple[int, int]]:
    """Character spans of `source` whose lines equal `search`'s lines, stripped."""
    want = [line.strip() for line in search.strip("\n").splitlines()]
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = []
    for i in range(len(lines) - len(want) + 1):
        if [line.strip() for line in lines[i:i + len(want)]] == want:
            spans.append((starts[i], starts[i + len(want)]))
    return spans


def apply_edits(source: str, edits: list[tuple[str, str]]) -> str:
    for n, (search, replace) in enumerate(edits, 1):
        if not search.strip():
            raise EditError(f"edit block {n} has an empty SEARCH part; quote the lines to change")
        count = source.count(search)
        if count == 1:
            source = source.replace(search, replace, 1)
            continue
        if count > 1:
            raise EditError(f"edit block {n}: its SEARCH text (first line "
                            f"{_first_line(search)!r}) occurs {count} times in the current "
                            f"best kernel; include more lines so it is unique")
        spans = _loose_span(source, search)
        if len(spans) == 1:
            start, end = spans[0]
            replace = replace if replace.endswith("\n") or not replace else replace + "\n"
            source = source[:start] + replace + source[end:]
            continue
        if len(spans) > 1:
            raise EditError(f"edit block {n}: its SEARCH text (first line "
                            f"{_first_line(search)!r}) occurs {len(spans)} times; include more "
                            f"lines so it is unique")
        raise EditError(f"edit block {n}: its SEARCH text (first line {_first_line(search)!r}) "
                        f"does not occur in the current best kernel; copy the lines exactly "
                        f"as the kernel shown has them")
    return source
