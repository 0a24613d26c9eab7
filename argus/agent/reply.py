"""Parsing the planner model's reply: one JSON object naming a technique and a config.

    {"technique": "gemm-deep-pipeline", "config": {"stages": 4, ...},
     "invariants": ["..."], "rationale": "..."}          or   {"stop": true, "rationale": "..."}

Or a new DSL kernel (the coder step): a ```python fenced block holding a complete Argus DSL
file, with an optional JSON object beside it naming the technique, invariants and
rationale ({"technique": ..., "kernel": "<source>"} works too). The kernel text is only
ever written to a file and parsed by `argus check` (argus/agent/coder.py), never executed.

Knobs left out of "config" keep the current best's values. Everything else about the reply
is untrusted: unknown knobs, wrong types, out-of-range values, missing JSON, and claims of
speed are rejected or ignored, and the reason goes back to the model in the next prompt.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from argus.agent.coder import MAX_KERNEL_CHARS
from argus.agent.gemm_config import ConfigError, GemmConfig, parse_config

MAX_REPLY_CHARS = 20000
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)
_CODE_FENCE = re.compile(r"```(?:python|py)[ \t]*\n(.*?)```", re.S)
_CODE_OPEN = re.compile(r"```(?:python|py)[ \t]*\n")


class ReplyError(ValueError):
    """Why a reply was rejected, phrased for the model to fix in its next reply."""


@dataclass
class Proposal:
    technique: str
    config: GemmConfig | None
    invariants: list[str] = field(default_factory=list)
    rationale: str = ""
    stop: bool = False
    kernel_source: str | None = None          # the coder step: a DSL kernel to check


def _candidates(text: str):
    for match in _FENCE.finditer(text):
        yield match.group(1)
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def extract_object(text: str) -> dict:
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply was empty; answer with one JSON object")
    text = text[:MAX_REPLY_CHARS]
    for cand in _candidates(text):
        if isinstance(cand, str):
            try:
                cand = json.loads(cand)
            except json.JSONDecodeError:
                continue
        if isinstance(cand, dict) and ("config" in cand or "stop" in cand or "kernel" in cand):
            return cand
    raise ReplyError("no JSON object with a \"config\" key was found in the reply; answer "
                     "with {\"technique\": ..., \"config\": {...}, \"invariants\": [...], "
                     "\"rationale\": ...}")


def _truncated(text: str, reply_chars: int = MAX_REPLY_CHARS,
               kernel_chars: int = MAX_KERNEL_CHARS) -> str:
    if isinstance(text, str) and len(text) > reply_chars:
        return (f" (the reply was {len(text)} characters and was cut at {reply_chars}; "
                f"keep kernels under {kernel_chars})")
    return ""


def extract_kernel(text: str, kernel_chars: int = MAX_KERNEL_CHARS,
                   reply_chars: int | None = None) -> tuple[str | None, str]:
    """(kernel source or None, the reply without it). Raises ReplyError for a kernel block
    that is not closed (often: cut by the size limit) or too long. The limits default to
    the GEMM coder step's; the kernel coder sizes them to its task (coding/budget.py)."""
    if reply_chars is None:
        reply_chars = MAX_REPLY_CHARS + max(0, kernel_chars - MAX_KERNEL_CHARS)
    cut = text[:reply_chars]
    match = _CODE_FENCE.search(cut)
    if match is None:
        if _CODE_OPEN.search(cut):
            raise ReplyError("the ```python block is not closed"
                             + _truncated(text, reply_chars, kernel_chars))
        return None, cut
    source = match.group(1)
    if len(source) > kernel_chars:
        raise ReplyError(f"the kernel is {len(source)} characters; the limit is "
                         f"{kernel_chars}")
    return source, cut[:match.start()] + cut[match.end():]


def _meta(obj: dict) -> tuple[str, list[str], str]:
    technique = obj.get("technique", "unspecified")
    if not isinstance(technique, str):
        raise ReplyError(f"\"technique\" must be a string, got {technique!r}")
    rationale = obj.get("rationale", "")
    rationale = rationale[:500] if isinstance(rationale, str) else ""
    invariants = obj.get("invariants", [])
    if not isinstance(invariants, list) or not all(isinstance(i, str) for i in invariants):
        raise ReplyError("\"invariants\" must be a list of strings")
    return technique[:80] or "unspecified", [i[:200] for i in invariants[:10]], rationale


def _kernel_proposal(source: str, rest: str) -> Proposal:
    obj = {}
    for cand in _candidates(rest):
        if isinstance(cand, str):
            try:
                cand = json.loads(cand)
            except json.JSONDecodeError:
                continue
        if isinstance(cand, dict):
            obj = cand
            break
    technique, invariants, rationale = _meta(obj)
    if "@kernel" not in source:
        raise ReplyError("the ```python block has no @kernel function; write a complete Argus "
                         "DSL file (imports from argus.lang, one @kernel)")
    return Proposal(technique if technique != "unspecified" else "coder", None, invariants,
                    rationale, kernel_source=source)


def parse_reply(text: str, base: GemmConfig) -> Proposal:
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply was empty; answer with one JSON object")
    source, rest = extract_kernel(text)
    if source is not None:
        return _kernel_proposal(source, rest)
    try:
        obj = extract_object(text)
    except ReplyError as err:
        raise ReplyError(str(err) + _truncated(text)) from None
    if isinstance(obj.get("kernel"), str) and "config" not in obj:
        if len(obj["kernel"]) > MAX_KERNEL_CHARS:
            raise ReplyError(f"the kernel is {len(obj['kernel'])} characters; the limit is "
                             f"{MAX_KERNEL_CHARS}")
        return _kernel_proposal(obj["kernel"], json.dumps({k: v for k, v in obj.items()
                                                           if k != "kernel"}))
    technique = obj.get("technique", "unspecified")
    if not isinstance(technique, str):
        raise ReplyError(f"\"technique\" must be a string, got {technique!r}")
    rationale = obj.get("rationale", "")
    rationale = rationale[:500] if isinstance(rationale, str) else ""
    if obj.get("stop") is True:
        return Proposal(technique[:80] or "stop", None, rationale=rationale, stop=True)
    invariants = obj.get("invariants", [])
    if not isinstance(invariants, list) or not all(isinstance(i, str) for i in invariants):
        raise ReplyError("\"invariants\" must be a list of strings")
    try:
        config = parse_config(obj.get("config"), base=base)
    except ConfigError as err:
        raise ReplyError("config rejected: " + "; ".join(err.problems)) from None
    return Proposal(technique[:80] or "unspecified", config,
                    [i[:200] for i in invariants[:10]], rationale)
