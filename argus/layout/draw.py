"""Drawings of layouts: which thread and register holds which element of a tile.

A drawing is first built as a `Grid` (cells with labels, colours and highlights), then
rendered to SVG (written by hand, no dependency) or PNG (Pillow, the `draw` extra). Both
renderers share one `Geometry`, so the two formats place every cell at the same pixel.

- `draw_tv(tv, path, ...)`: a thread-value layout (a Hopper atom): cell (m, n) reads
  "T<thread> V<value>", coloured by thread (one hue band per warp). The verifier reuses
  `highlight_cells` / `highlight_thread` to mark a counterexample on the tile.
- `draw_layout(layout, path)`: a plain shape:stride layout, like CuTe's print_layout:
  cell (i, j) shows L(i, j). Rank 1 is one row; rank > 2 is shown as (mode 0, rest).

The output format follows the suffix of `path`: `.svg` or `.png`.
"""

from __future__ import annotations

import colorsys
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable
from xml.sax.saxutils import escape, quoteattr

from .int_tuple import product
from .notation import format_layout

# The most cells one drawing has: a 128 x 256 tile (the largest wgmma accumulator tile is
# 64 x 256). A larger layout is refused before any cell is built, not drawn for minutes.
MAX_CELLS = 128 * 256

HIGHLIGHT_COLOUR = "#e00000"
UNOWNED_COLOUR = "#eeeeee"
SUFFIXES = (".svg", ".png")

# Pastel colours for plain layouts, picked by value mod 8 (as CuTe's LaTeX printer does).
VALUE_PALETTE = (
    "#ffffff", "#d9e8fb", "#dff2d8", "#fde3c8", "#e8dcf5", "#fbd9e4", "#d9f3f1", "#f4f0c8",
)


class DrawError(ValueError):
    """A drawing request that cannot be honoured (bad path suffix, bad highlight, no Pillow)."""


@dataclass(frozen=True)
class Cell:
    """One tile element: where it is, what it says, how it is filled."""

    row: int
    col: int
    label: str
    fill: str
    attrs: tuple[tuple[str, str], ...] = ()  # extra data-* attributes in the SVG


@dataclass(frozen=True)
class Grid:
    """Everything a renderer needs, independent of the output format."""

    rows: int
    cols: int
    cells: tuple[Cell, ...]
    title: str
    notes: tuple[str, ...] = ()
    highlights: frozenset[tuple[int, int]] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Geometry:
    """Pixel positions shared by the SVG and PNG renderers."""

    rows: int
    cols: int
    cell_w: int
    cell_h: int
    left: int  # x of column 0
    top: int  # y of row 0
    margin: int = 10
    title_size: int = 14
    font_size: int = 11

    @classmethod
    def for_grid(cls, grid: Grid) -> "Geometry":
        longest = max((len(c.label) for c in grid.cells), default=1)
        cell_w = max(28, 7 * longest + 12)
        index_w = 7 * len(str(max(grid.rows - 1, 0))) + 10
        margin = 10
        top = margin + 22 + 16 * len(grid.notes) + 18  # title, notes, column indices
        return cls(grid.rows, grid.cols, cell_w, 22, margin + index_w, top, margin)

    @property
    def width(self) -> int:
        return self.left + self.cols * self.cell_w + self.margin

    @property
    def height(self) -> int:
        return self.top + self.rows * self.cell_h + self.margin

    def cell_box(self, row: int, col: int) -> tuple[int, int, int, int]:
        """(x, y, w, h) of the cell at (row, col)."""
        return (self.left + col * self.cell_w, self.top + row * self.cell_h,
                self.cell_w, self.cell_h)


# ---------------------------------------------------------------------------------------
# Colours


@functools.lru_cache(maxsize=None)
def thread_colour(thread: int) -> str:
    """A stable light colour for a thread: the warp picks a hue band, the lane a shade.

    Neighbouring lanes get visibly different shades (lane * 13 mod 32 scatters them), and
    the same thread always gets the same colour, in every drawing.
    """
    if thread < 0:
        return UNOWNED_COLOUR
    warp, lane = divmod(thread, 32)
    hue = ((warp * 0.618034) % 1.0 + (lane % 8) * 0.012) % 1.0
    shade = ((lane * 13) % 32) / 31.0
    lightness = 0.60 + 0.28 * shade
    saturation = 0.75 - 0.25 * shade
    r, g, b = colorsys.hls_to_rgb(hue, lightness, saturation)
    return "#{:02x}{:02x}{:02x}".format(round(r * 255), round(g * 255), round(b * 255))


def value_colour(value: int) -> str:
    return VALUE_PALETTE[value % len(VALUE_PALETTE)]


# ---------------------------------------------------------------------------------------
# Grids


def tv_grid(tv, highlight_cells: Iterable[tuple[int, int]] = (),
            highlight_thread: int | None = None, title: str | None = None) -> Grid:
    """The grid of a thread-value layout, from its `owner_table()` (thread[M,N], value[M,N])."""
    threads, values = tv.owner_table()
    rows, cols = threads.shape
    cells = []
    for m in range(rows):
        for n in range(cols):
            t, v = int(threads[m, n]), int(values[m, n])
            label = f"T{t} V{v}" if t >= 0 else "-"
            cells.append(Cell(m, n, label, thread_colour(t),
                              (("data-thread", str(t)), ("data-value", str(v)))))
    marked = set(_checked_cells(highlight_cells, rows, cols))
    if highlight_thread is not None:
        owned = [(c.row, c.col) for c in cells if int(threads[c.row, c.col]) == highlight_thread]
        if not owned:
            present = sorted({int(t) for t in threads.flat if t >= 0})
            span = f"{present[0]}..{present[-1]}" if present else "none"
            raise DrawError(f"thread {highlight_thread} owns no element of {tv.name} "
                            f"(its threads: {span})")
        marked.update(owned)
    n_threads = len({int(t) for t in threads.flat if t >= 0})
    n_values = int(values.max()) + 1 if values.size else 0
    default = f"{tv.name}: {rows}x{cols} tile, {n_threads} threads x {n_values} values"
    notes = ()
    if highlight_thread is not None:
        warp, lane = divmod(highlight_thread, 32)
        notes = (f"outlined: thread {highlight_thread} (warp {warp}, lane {lane})",)
    return Grid(rows, cols, tuple(cells), title or default, notes, frozenset(marked))


def layout_grid(layout, title: str | None = None,
                highlight_cells: Iterable[tuple[int, int]] = ()) -> Grid:
    """The grid of a plain layout: cell (i, j) shows L(i + M*j), M the size of mode 0.

    Because a flat index is colexicographic, i + M*j is exactly coordinate (i, j) of the
    (mode 0, rest) view, whatever the nesting of the modes.
    """
    shape = layout.shape
    modes = shape if isinstance(shape, tuple) else (shape,)
    size = int(layout.size())
    check_drawable(size, format_layout(layout))
    notes: tuple[str, ...] = ()
    if len(modes) == 1:
        rows, cols = 1, size
    else:
        rows = int(product(modes[0]))
        cols = size // rows
        if len(modes) > 2:
            notes = (f"rank-{len(modes)} layout drawn as (mode 0, rest): column j is the "
                     f"colexicographic index into modes 1..{len(modes) - 1}",)
    cells = []
    for i in range(rows):
        for j in range(cols):
            value = layout(i + rows * j)
            if not isinstance(value, int):
                raise DrawError(f"layout value at ({i}, {j}) is symbolic ({value}); "
                                "only layouts with integer shapes and strides can be drawn")
            cells.append(Cell(i, j, str(value), value_colour(value),
                              (("data-value", str(value)),)))
    if title is None:
        title = format_layout(layout)
    marked = frozenset(_checked_cells(highlight_cells, rows, cols))
    return Grid(rows, cols, tuple(cells), title, notes, marked)


def check_drawable(cells: int, what: str) -> None:
    """A DrawError when a drawing of `cells` cells would be over MAX_CELLS."""
    if cells > MAX_CELLS:
        shown = what if len(what) <= 80 else what[:80] + "..."
        count = str(cells) if cells < 10 ** 12 else f"about 2**{cells.bit_length() - 1}"
        raise DrawError(f"{shown} has {count} elements; a drawing shows at most {MAX_CELLS} "
                        f"cells: draw a tile of it (a smaller shape with the same strides)")


def _checked_cells(cells: Iterable[tuple[int, int]], rows: int, cols: int):
    for cell in cells:
        row, col = cell
        if not (0 <= row < rows and 0 <= col < cols):
            raise DrawError(f"highlight cell {tuple(cell)} is outside the {rows}x{cols} tile")
        yield (int(row), int(col))


# ---------------------------------------------------------------------------------------
# Renderers


def render_svg(grid: Grid) -> str:
    """The grid as a standalone SVG document (a string)."""
    geo = Geometry.for_grid(grid)
    fs, half = geo.font_size, geo.cell_h // 2
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{geo.width}" height="{geo.height}" '
        f'viewBox="0 0 {geo.width} {geo.height}" font-family="monospace" font-size="{fs}">',
        f"<title>{escape(grid.title)}</title>",
        f'<rect class="background" x="0" y="0" width="{geo.width}" height="{geo.height}" '
        'fill="#ffffff"/>',
        f'<text class="title" x="{geo.margin}" y="{geo.margin + geo.title_size}" '
        f'font-size="{geo.title_size}" font-weight="bold">{escape(grid.title)}</text>',
    ]
    for k, note in enumerate(grid.notes):
        y = geo.margin + 22 + 16 * k + 12
        out.append(f'<text class="note" x="{geo.margin}" y="{y}">{escape(note)}</text>')
    out.append('<g class="col-index" text-anchor="middle" fill="#444444">')
    for col in range(grid.cols):
        x, _, w, _ = geo.cell_box(0, col)
        out.append(f'<text x="{x + w // 2}" y="{geo.top - 5}">{col}</text>')
    out.append("</g>")
    out.append('<g class="row-index" text-anchor="end" fill="#444444">')
    for row in range(grid.rows):
        _, y, _, h = geo.cell_box(row, 0)
        out.append(f'<text x="{geo.left - 5}" y="{y + half + fs // 3}">{row}</text>')
    out.append("</g>")
    out.append('<g class="cells" text-anchor="middle">')
    for c in grid.cells:
        x, y, w, h = geo.cell_box(c.row, c.col)
        attrs = "".join(f" {k}={quoteattr(v)}" for k, v in c.attrs)
        out.append(
            f'<g class="cell" data-row="{c.row}" data-col="{c.col}"{attrs}>'
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{c.fill}" '
            'stroke="#666666" stroke-width="0.5"/>'
            f'<text x="{x + w // 2}" y="{y + half + fs // 3}">{escape(c.label)}</text></g>')
    out.append("</g>")
    out.append(f'<g class="highlights" fill="none" stroke="{HIGHLIGHT_COLOUR}" '
               'stroke-width="3">')
    for row, col in sorted(grid.highlights):
        x, y, w, h = geo.cell_box(row, col)
        out.append(f'<rect class="highlight" data-row="{row}" data-col="{col}" '
                   f'x="{x + 1.5}" y="{y + 1.5}" width="{w - 3}" height="{h - 3}"/>')
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_png(grid: Grid, path: Path) -> None:
    """The grid as a PNG image (needs Pillow: pip install pillow, or the `draw` extra)."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise DrawError("drawing PNG needs Pillow: pip install pillow "
                        "(or pip install 'argus-kernels[draw]'), or write .svg instead") from None
    geo = Geometry.for_grid(grid)
    image = Image.new("RGB", (geo.width, geo.height), "#ffffff")
    pen = ImageDraw.Draw(image)
    font = _png_font(ImageFont, geo.font_size)
    title_font = _png_font(ImageFont, geo.title_size)

    def centred(cx: float, cy: float, text: str, fill: str = "#000000") -> None:
        x0, y0, x1, y1 = pen.textbbox((0, 0), text, font=font)
        pen.text((cx - (x1 - x0) / 2 - x0, cy - (y1 - y0) / 2 - y0), text, fill=fill, font=font)

    pen.text((geo.margin, geo.margin), grid.title, fill="#000000", font=title_font)
    for k, note in enumerate(grid.notes):
        pen.text((geo.margin, geo.margin + 22 + 16 * k), note, fill="#000000", font=font)
    for col in range(grid.cols):
        x, _, w, _ = geo.cell_box(0, col)
        centred(x + w / 2, geo.top - 9, str(col), "#444444")
    for row in range(grid.rows):
        _, y, _, h = geo.cell_box(row, 0)
        x0, y0, x1, y1 = pen.textbbox((0, 0), str(row), font=font)
        pen.text((geo.left - 5 - (x1 - x0) - x0, y + h / 2 - (y1 - y0) / 2 - y0), str(row),
                 fill="#444444", font=font)
    for c in grid.cells:
        x, y, w, h = geo.cell_box(c.row, c.col)
        pen.rectangle((x, y, x + w, y + h), fill=c.fill, outline="#666666", width=1)
        centred(x + w / 2, y + h / 2, c.label)
    for row, col in grid.highlights:
        x, y, w, h = geo.cell_box(row, col)
        pen.rectangle((x, y, x + w, y + h), outline=HIGHLIGHT_COLOUR, width=3)
    image.save(path, format="PNG")


def _png_font(image_font, size: int):
    try:
        return image_font.load_default(size=size)  # scalable font, Pillow >= 10.1
    except TypeError:
        return image_font.load_default()


# ---------------------------------------------------------------------------------------
# Entry points


def write_grid(grid: Grid, path: str | Path) -> Path:
    """Write `grid` to `path`, in the format its suffix names (.svg or .png)."""
    path = Path(path)
    _check_suffix(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".svg":
            path.write_text(render_svg(grid), encoding="utf-8")
        else:
            render_png(grid, path)
    except OSError as err:
        raise DrawError(f"cannot write {path}: {err.strerror or err}; give a path in a "
                        f"folder you can write") from None
    return path


def draw_tv(tv, path: str | Path, highlight_cells: Iterable[tuple[int, int]] = (),
            highlight_thread: int | None = None, title: str | None = None) -> Path:
    """Draw a thread-value layout to `path` (.svg or .png); returns the path written.

    `highlight_cells` ((row, col) pairs) and every cell of `highlight_thread` get a thick
    red outline: this is how a counterexample's offending thread is shown on the tile.
    """
    _check_suffix(path)
    return write_grid(tv_grid(tv, highlight_cells, highlight_thread, title), path)


def draw_layout(layout, path: str | Path, title: str | None = None,
                highlight_cells: Iterable[tuple[int, int]] = ()) -> Path:
    """Draw a plain layout to `path` (.svg or .png): cell (i, j) shows L(i, j)."""
    _check_suffix(path)
    return write_grid(layout_grid(layout, title, highlight_cells), path)


def _check_suffix(path: str | Path) -> None:
    """Fail on a bad suffix before any work is done on a large tile."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise DrawError(f"cannot draw to '{path}': unknown suffix '{Path(path).suffix}'; "
                        f"use one of {', '.join(SUFFIXES)}")
