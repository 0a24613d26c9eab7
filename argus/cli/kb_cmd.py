"""`argus kb search "QUERY" [--op gemm|attention|moe] [--signal NAME] [--json] [--limit N]`.

Ranked retrieval over the Hopper optimisation knowledge base (argus/agent/knowledge/
techniques/*.toml): BM25 over the text plus bonuses for the op and for each matching
profile signal (argus.agent.knowledge.search; the same ranking the planner and the MCP
`knowledge_search` tool use). --signal may be repeated. Prints one line per technique
(score, id, title, its DSL recipe when it has one); --json prints schema "argus.kb/1".
Exit 0 with results, 1 when nothing matched, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json

from argus.cli.errors import UsageError

SCHEMA = "argus.kb/1"
MAX_LIMIT = 50


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "kb", help="search the Hopper optimisation knowledge base",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="kb_command", metavar="ACTION")
    search = sub.add_parser("search", help="ranked techniques for a query, op and signals",
                            description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    # validated by hand (not argparse types/choices) so errors are one line, exit 2
    search.add_argument("query", nargs="?", default=None, metavar="QUERY",
                        help='free text, e.g. "deeper pipeline" (quote it)')
    search.add_argument("--op", default=None, help="gemm, attention or moe")
    search.add_argument("--signal", action="append", default=[], metavar="NAME",
                        help="a profile signal such as latency-bound (repeatable)")
    search.add_argument("--limit", default="5", metavar="N", help="results (default 5)")
    search.add_argument("--json", action="store_true", help="print schema argus.kb/1")
    search.set_defaults(run=run_search)
    parser.set_defaults(run=_no_action)


def _no_action(args) -> int:
    raise UsageError("argus kb: say what to do: argus kb search \"QUERY\" [--op OP] "
                     "[--signal NAME] [--limit N] [--json]")


def _limit(text: str) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = 0
    if not 1 <= value <= MAX_LIMIT:
        raise UsageError(f"--limit {text}: give a whole number from 1 to {MAX_LIMIT}")
    return value


def _validate(args, techniques) -> tuple[str | None, list[str], int]:
    from argus.agent.knowledge import OPS

    if args.op is not None and args.op not in OPS:
        raise UsageError(f"--op {args.op}: unknown op; use one of {', '.join(OPS)}")
    known = sorted({s for t in techniques for s in t.signals})
    for signal in args.signal:
        if signal not in known:
            raise UsageError(f"--signal {signal}: no technique lists this signal; known "
                             f"signals: {', '.join(known)}")
    query = (args.query or "").strip()
    if not query and args.op is None and not args.signal:
        raise UsageError('argus kb search: give a QUERY (e.g. argus kb search "deeper '
                         'pipeline"), an --op or a --signal')
    return args.op, list(args.signal), _limit(args.limit)


def result_json(score: float, t) -> dict:
    return {"id": t.id, "score": round(score, 3), "title": t.title, "ops": list(t.ops),
            "signals": list(t.signals), "summary": t.summary, "expected_gain": t.expected_gain,
            "recipe": t.recipe.to_json() if t.recipe else None, "path": t.path,
            "sources": [s.url for s in t.sources]}


def run_search(args) -> int:
    from argus.agent.knowledge import load_knowledge, search

    techniques = load_knowledge()
    op, signals, limit = _validate(args, techniques)
    query = (args.query or "").strip()
    hits = search(query, op=op, signals=signals, top_k=len(techniques))
    if query or signals:     # a hit matches the text or a signal, not only the op bonus
        hits = [(s, t) for s, t in hits
                if (query and _matches(query, t)) or set(signals) & set(t.signals)]
    hits = hits[:limit]
    if args.json:
        print(json.dumps({"schema": SCHEMA, "query": query, "op": op, "signals": signals,
                          "limit": limit, "results": [result_json(s, t) for s, t in hits]},
                         indent=2))
    else:
        for score, t in hits:
            recipe = f"  recipe: {t.recipe.describe()}" if t.recipe else ""
            print(f"{score:6.2f}  {t.id:38s} {t.title}{recipe}")
        if not hits:
            print(f"no technique matches {query!r}; try fewer or other words")
    return 0 if hits else 1


def _matches(query: str, t) -> bool:
    from argus.agent.knowledge.search import document_terms, query_terms

    return bool(set(query_terms(query)) & set(document_terms(t)))
