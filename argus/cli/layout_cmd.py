"""`argus layout show LAYOUT -o FILE` and `argus layout list`: draw layouts, name the atoms.

LAYOUT is either the name of a Hopper atom (a thread-value layout, listed by
`argus layout list`) or a layout in CuTe notation such as "(4,8):(8,1)".
"""

from __future__ import annotations

import argparse
import difflib

from argus.cli.errors import UsageError


SHOWN_CHARS = 80   # of a long layout text, in a message


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "layout", help="draw a layout or a Hopper atom, list the atoms",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(run=_missing_subcommand)
    actions = parser.add_subparsers(dest="layout_command", metavar="ACTION")

    show = actions.add_parser(
        "show", help="draw LAYOUT to an .svg or .png file",
        description="Draw LAYOUT: an atom shows which thread and value holds each element; "
                    "a plain layout shows L(i, j) in cell (i, j).")
    show.add_argument("layout", metavar="LAYOUT",
                      help='CuTe notation such as "(4,8):(8,1)", or an atom name')
    show.add_argument("-o", "--output", required=True, metavar="FILE",
                      help="where to write the drawing; the suffix (.svg or .png) picks the format")
    show.add_argument("--title", help="title over the drawing (default: the layout itself)")
    show.add_argument("--thread", type=int, metavar="T",
                      help="outline every element that thread T holds (atoms only)")
    show.add_argument("--cell", action="append", default=[], type=_cell, metavar="ROW,COL",
                      help="outline the element at ROW,COL (repeatable)")
    show.set_defaults(run=run_show)

    listing = actions.add_parser("list", help="list the Hopper atom names")
    listing.set_defaults(run=run_list)


def run_show(args) -> int:
    from argus.layout.draw import draw_layout, draw_tv

    kind, target = resolve_layout(args.layout)
    if kind == "atom":
        path = draw_tv(target, args.output, highlight_cells=args.cell,
                       highlight_thread=args.thread, title=args.title)
    else:
        if args.thread is not None:
            raise UsageError(f"--thread needs an atom (a thread-value layout); "
                             f"'{args.layout}' is a plain layout: use --cell ROW,COL instead")
        path = draw_layout(target, args.output, title=args.title, highlight_cells=args.cell)
    print(f"wrote {path}")
    return 0


def run_list(args) -> int:
    from argus.layout.hopper import atom_names, get_atom

    for name in atom_names():
        atom = get_atom(name)
        rows, cols = atom.tile
        print(f"{name:<20} {rows}x{cols} tile, {atom.threads} threads x {atom.values} values")
    return 0


def resolve_layout(text: str):
    """("layout", Layout) for CuTe notation, ("atom", TVLayout) for an atom name."""
    text = text.strip()
    if _looks_like_notation(text):
        from argus.layout.notation import parse_layout

        try:
            return "layout", parse_layout(text)
        except ValueError as err:  # LayoutNotationError, LayoutError
            raise UsageError(_bad_layout_message(text, err)) from None
    from argus.layout.hopper import atom_names, get_atom

    names = list(atom_names())
    if text in names:
        return "atom", get_atom(text)
    close = difflib.get_close_matches(text, names, n=3) if len(text) <= SHOWN_CHARS else []
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    shown = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."
    raise UsageError(f"unknown atom '{shown}'{hint} (run `argus layout list` for the atom "
                     'names, or give a layout in CuTe notation such as "(4,8):(8,1)")')


def _bad_layout_message(text: str, err: ValueError) -> str:
    """One line naming the problem and its column, then the text with a caret under it."""
    problem, column = getattr(err, "problem", None), getattr(err, "column", None)
    shown = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."
    if problem is None or column is None:
        return f"bad layout '{shown}': {str(err).splitlines()[0]}"
    if column > SHOWN_CHARS:   # show the part of a long text around the column
        start = column - SHOWN_CHARS // 2
        excerpt, caret = "..." + text[start:start + SHOWN_CHARS] + "...", SHOWN_CHARS // 2 + 3
    else:
        excerpt, caret = shown, column - 1
    return (f"bad layout '{shown}': {problem} at column {column}\n"
            f"    {excerpt}\n    {' ' * caret}^")


def _looks_like_notation(text: str) -> bool:
    """Atom names are identifiers; CuTe notation starts with '(' or a digit."""
    return bool(text) and (text[0] in "(0123456789" or ":" in text)


def _cell(text: str) -> tuple[int, int]:
    try:
        row, col = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not ROW,COL (two integers)") from None
    return row, col


def _missing_subcommand(args) -> int:
    raise UsageError("choose an action: `argus layout show LAYOUT -o FILE` "
                     "or `argus layout list`")
