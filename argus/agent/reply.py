"""Parsing the planner model's reply: one JSON object naming a technique and a config.

    {"technique": "gemm-deep-pipeline", "config": {"stages": 4, ...},
     "invariants": ["..."], "rationale": "..."}          or   {"stop": true, "rationale": "..."}

Knobs left out of "config" keep the current best's values. Everything else about the reply
is untrusted: unknown knobs, wrong types, out-of-range values, missing JSON, and claims of
speed are rejected or ignored, and the reason goes back to the model in the next prompt.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from argus.agent.gemm_config import ConfigError, GemmConfig, parse_config

MAX_REPLY_CHARS = 20000
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


class ReplyError(ValueError):
    """Why a reply was rejected, phrased for the model to fix in its next reply."""


@dataclass
class Proposal:
    technique: str
    config: GemmConfig | None
    invariants: list[str] = field(default_factory=list)
    rationale: str = ""
    stop: bool = False


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
        if isinstance(cand, dict) and ("config" in cand or "stop" in cand):
            return cand
    raise ReplyError("no JSON object with a \"config\" key was found in the reply; answer "
                     "with {\"technique\": ..., \"config\": {...}, \"invariants\": [...], "
                     "\"rationale\": ...}")


def parse_reply(text: str, base: GemmConfig) -> Proposal:
    obj = extract_object(text)
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
