"""`argus mcp`: serve the agent's tools over the Model Context Protocol on stdio.

Tools: check, compile, run_interpret, layout_show, knowledge_search, knowledge_get,
cost_model, optimize, bench, dsl_guide (see docs/agent.md). Register it with a client, e.g.
`claude mcp add argus -- argus mcp`. Needs the agent extra (the mcp SDK 2.x).
"""
from __future__ import annotations

import argparse

from argus.cli.errors import UsageError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "mcp", help="serve the agent's tools over MCP (stdio)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(run=run_mcp)


def run_mcp(args) -> int:
    from argus.agent.mcp_server import build_server

    try:
        server = build_server()
    except RuntimeError as err:
        raise UsageError(str(err)) from None
    server.run("stdio")
    return 0
