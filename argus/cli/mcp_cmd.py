"""`argus mcp`: serve the agent's tools over the Model Context Protocol on stdio.

Tools: check, compile, run_interpret, layout_show, knowledge_search, knowledge_get,
cost_model, optimize, bench, dsl_guide (see docs/agent.md). Register it with a client, e.g.
`claude mcp add argus -- argus mcp`. Needs the agent extra (the mcp SDK 2.x).
Every path a client gives must lie inside the workspace (--workspace DIR, else
$ARGUS_WORKSPACE, else the working directory); others are refused.
"""
from __future__ import annotations

import argparse

from argus.cli.errors import UsageError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "mcp", help="serve the agent's tools over MCP (stdio)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", metavar="DIR", default=None,
                        help="the folder the tools may read and write (default: "
                             "$ARGUS_WORKSPACE, else the working directory)")
    parser.set_defaults(run=run_mcp)


def run_mcp(args) -> int:
    from argus.agent.mcp_server import build_server
    from argus.agent.workspace import Workspace

    workspace = Workspace(args.workspace)
    if not workspace.root.is_dir():
        raise UsageError(f"--workspace {args.workspace}: no such folder")
    try:
        server = build_server(workspace)
    except RuntimeError as err:
        raise UsageError(str(err)) from None
    server.run("stdio")
    return 0
