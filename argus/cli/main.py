"""Entry point of the `argus` console command.

Exit status: 0 on success, 2 on a usage error (bad arguments, a layout string that does not
parse, an unknown atom, an unknown output suffix), printed as one line on stderr with no
traceback. Anything else escaping is an internal bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from argus import __version__
from argus.cli import bench_cmd, check_cmd, compile_cmd, demo, layout_cmd, run_cmd
from argus.cli import mcp_cmd, optimize_cmd
from argus.cli import kb_cmd
from argus.cli.errors import UsageError
from argus.layout.draw import DrawError

# Subcommands, each a module with register(subparsers).
SUBCOMMANDS = (check_cmd, run_cmd, compile_cmd, layout_cmd, demo, bench_cmd, optimize_cmd, mcp_cmd,
               kb_cmd)

EXIT_OK, EXIT_USAGE = 0, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="argus",
        description="Argus: a tile DSL for NVIDIA Hopper whose compiler verifies "
                    "data-flow invariants.")
    parser.add_argument("--version", action="version", version=f"argus {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse has printed usage or --version already
        return int(stop.code or 0)
    if getattr(args, "run", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.run(args) or EXIT_OK)
    except (UsageError, DrawError) as err:
        print(f"argus: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:   # `argus ... | head`: the reader left; not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
