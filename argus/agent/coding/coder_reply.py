"""Parsing a whole-kernel coder reply: the JSON beside it, and the new kernel (a complete
```python file, or edit blocks applied to the current best kernel, with the stated
invariants inserted as tag_asserts). Everything is untrusted; a ReplyError says why."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from argus.agent.coder import MAX_KERNEL_CHARS
from argus.agent.coding import invariants as inv
from argus.agent.coding.edits import EditError, apply_edits, parse_edits
from argus.agent.reply import ReplyError, extract_kernel

_EDIT_SPAN = re.compile(r"^<{5,9} SEARCH.*?^>{5,9} REPLACE[ \t]*$", re.S | re.M)


@dataclass
class CoderProposal:
    technique: str = "coder"
    source: str = ""
    how: str = ""                          # "file" or "edits (N blocks)"
    checked_invariants: list[dict] = field(default_factory=list)
    prose_invariants: list[str] = field(default_factory=list)
    rationale: str = ""
    stop: bool = False


def _meta(text: str) -> dict:
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    return {}


def parse_coder_reply(text: str, base_source: str,
                      kernel_chars: int = MAX_KERNEL_CHARS) -> CoderProposal:
    """The proposal of one reply; `kernel_chars` bounds the kernel it yields (a whole file,
    or the current best after its edits), coding/budget.kernel_chars of the task."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply was empty; answer with a JSON object and a kernel")
    try:
        edits = parse_edits(text)
    except EditError as err:
        raise ReplyError(str(err)) from None
    if edits and not base_source.strip():
        raise ReplyError("there is no current kernel to edit yet; write the whole file in "
                         "one ```python block")
    if edits:
        rest = _EDIT_SPAN.sub("", text)
        try:
            source = apply_edits(base_source, edits)
        except EditError as err:
            raise ReplyError(str(err)) from None
        how = f"edits ({len(edits)} block{'s' * (len(edits) > 1)})"
        if len(source) > kernel_chars:
            raise ReplyError(f"after the edits the kernel is {len(source)} characters; the "
                             f"limit is {kernel_chars}")
    else:
        source, rest = extract_kernel(text, kernel_chars)
        how = "file"
    meta = _meta(rest)
    if source is None:
        if meta.get("stop") is True:
            return CoderProposal(stop=True, rationale=str(meta.get("rationale", ""))[:500])
        raise ReplyError("the reply has neither a ```python block nor edit blocks; write the "
                         "whole kernel file or SEARCH/REPLACE blocks against the current best")
    if "@kernel" not in source:
        raise ReplyError("the new file has no @kernel function; write a complete Argus DSL "
                         "file (imports from argus.lang, @kernel functions)")
    technique = meta.get("technique", "coder")
    technique = technique[:80] if isinstance(technique, str) and technique else "coder"
    stated = meta.get("invariants", [])
    if not isinstance(stated, list):
        raise ReplyError("\"invariants\" must be a list")
    try:
        checked, prose = inv.split(stated)
        source = inv.insert(source, checked)
    except inv.InvariantError as err:
        raise ReplyError(str(err)) from None
    rationale = meta.get("rationale", "")
    return CoderProposal(technique, source, how, checked, prose,
                         rationale[:500] if isinstance(rationale, str) else "")
