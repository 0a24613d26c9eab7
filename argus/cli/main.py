"""Entry point of the `argus` console command.

Exit status: 0 on success, 2 on a usage error (bad arguments, a layout string that does not
parse, an unknown atom, an unknown output suffix), printed as one line on stderr with no
traceback. Anything else escaping is an internal bug: it becomes one "internal error, please
report" line (exit 70), the traceback only with ARGUS_TRACEBACK=1 set. Running out of memory
or of recursion depth is the input's size, not a bug: a usage error naming the limit.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from argus import __version__
from argus.cli import bench_cmd, check_cmd, compile_cmd, demo, layout_cmd, run_cmd
from argus.cli import mcp_cmd, optimize_cmd
from argus.cli import kb_cmd
from argus.cli.errors import UsageError
from argus.layout.draw import DrawError

# Subcommands, each a module with register(subparsers).
SUBCOMMANDS = (check_cmd, run_cmd, compile_cmd, layout_cmd, demo, bench_cmd, optimize_cmd, mcp_cmd,
               kb_cmd)

EXIT_OK, EXIT_USAGE, EXIT_INTERNAL = 0, 2, 70   # 70: EX_SOFTWARE of sysexits.h
# subcommands whose one positional argument is a kernel file (FILE.py[::KERNEL])
TARGET_COMMANDS = ("check", "run", "compile")


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
    argv = protect_targets(list(sys.argv[1:] if argv is None else argv))
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
    except KeyboardInterrupt:
        print("argus: interrupted", file=sys.stderr)
        return 130
    except (MemoryError, RecursionError) as err:
        print(f"argus: error: the input is too large to {args.command}: "
              f"{type(err).__name__}; make the shapes, the layout or the expressions "
              f"smaller (argus/input_limits.py states the limits)", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # a bug of ours: one line, never a traceback for the user
        return internal_error(args.command, err)


def internal_error(command: str, err: BaseException) -> int:
    """An exception nothing expected: one line naming it and where it was raised."""
    if os.environ.get("ARGUS_TRACEBACK"):
        traceback.print_exception(err)
    frames = traceback.extract_tb(err.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    message = str(err).splitlines()[0][:200] if str(err) else ""
    print(f"argus: internal error in `argus {command}`: {type(err).__name__}{where}"
          f"{': ' + message if message else ''} -- please report it with the command line "
          f"(ARGUS_TRACEBACK=1 prints the traceback)", file=sys.stderr)
    return EXIT_INTERNAL


def protect_targets(argv: list[str]) -> list[str]:
    """A positional FILE argument that begins with '-' (a file named `--help.py`) would
    reach argparse as an option: after a subcommand that takes a kernel file, the first
    argument that begins with '-' and names an existing file is moved after `--`.
    (`argus check -- --help.py` works too, as argparse defines.)"""
    if not argv or argv[0] not in TARGET_COMMANDS or "--" in argv:
        return argv
    head, rest = argv[:1], argv[1:]
    for i, arg in enumerate(rest):
        if arg.startswith("-") and _names_a_file(arg):
            return head + rest[:i] + rest[i + 1:] + ["--", arg]
    return argv


def _names_a_file(arg: str) -> bool:
    path_text = arg.partition("::")[0]
    try:
        return Path(path_text).is_file()
    except (OSError, ValueError):
        return False


if __name__ == "__main__":
    sys.exit(main())
