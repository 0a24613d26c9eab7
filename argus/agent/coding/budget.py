"""How large a coder reply may be: enough to rewrite the kernel it changes.

A whole-kernel reply repeats the kernel, so the budget is sized to it: about 3.2 characters
per token for Python source, times a margin for the changes and the JSON beside it, plus
a fixed allowance, between a floor and a ceiling. `max_tokens` given (the --max-tokens
flag) overrides it. With no kernel yet (a KernelBench problem: the model writes the first
file from nothing) the budget is that of a new kernel as long as the task allows.

The characters a kernel may have follow the same rule (`kernel_chars`): the GEMM coder
step's 16,000, or more for a task whose start kernel is longer (the library attention
kernel is ~17,000), so the start kernel and a whole rewrite of it are never cut.
"""
from __future__ import annotations

from argus.agent.coder import MAX_KERNEL_CHARS

CHARS_PER_TOKEN = 3.2
MARGIN = 1.5
ALLOWANCE = 1024
FLOOR, CEILING = 2048, 32768
KERNEL_ALLOWANCE = 4000          # characters a rewrite may add to the start kernel
KERNEL_CHARS_CEILING = int(CEILING * CHARS_PER_TOKEN)


def kernel_chars(start_source: str = "") -> int:
    """The longest kernel file a task's replies may carry (whole or after edits)."""
    need = int(len(start_source) * MARGIN) + KERNEL_ALLOWANCE
    return max(MAX_KERNEL_CHARS, min(KERNEL_CHARS_CEILING, need))


def reply_tokens(kernel_source: str, max_tokens: int | None = None,
                 new_kernel_chars: int = MAX_KERNEL_CHARS) -> int:
    """Tokens for a reply that rewrites `kernel_source`; with no kernel (blank), for a new
    kernel of up to `new_kernel_chars` characters."""
    if max_tokens:
        return int(max_tokens)
    chars = len(kernel_source) if kernel_source.strip() else new_kernel_chars
    need = int(chars / CHARS_PER_TOKEN * MARGIN) + ALLOWANCE
    return max(FLOOR, min(CEILING, need))
