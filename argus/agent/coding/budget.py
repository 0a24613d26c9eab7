"""How many tokens a coder reply may use: enough to rewrite the kernel it changes.

A whole-kernel reply repeats the kernel, so the budget is sized to it: about 3.2 characters
per token for Python source, times a margin for the changes and the JSON beside it, plus
a fixed allowance, between a floor and a ceiling. `max_tokens` given (the --max-tokens
flag) overrides it.
"""
from __future__ import annotations

CHARS_PER_TOKEN = 3.2
MARGIN = 1.5
ALLOWANCE = 1024
FLOOR, CEILING = 2048, 32768


def reply_tokens(kernel_source: str, max_tokens: int | None = None) -> int:
    if max_tokens:
        return int(max_tokens)
    need = int(len(kernel_source) / CHARS_PER_TOKEN * MARGIN) + ALLOWANCE
    return max(FLOOR, min(CEILING, need))
