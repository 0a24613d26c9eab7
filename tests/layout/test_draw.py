"""Drawings: one cell per tile element, labels from the owner table, colours, outlines."""

import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from argus.layout.draw import DrawError, draw_layout, draw_tv, thread_colour
from argus.layout.hopper import atom_names, get_atom
from argus.layout.notation import parse_layout

SVG = "{http://www.w3.org/2000/svg}"


def svg_cells(path):
    """{(row, col): (label, fill)} of the drawn cells, and the set of outlined cells."""
    root = ET.parse(path).getroot()
    cells = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") != "cell":
            continue
        key = (int(group.get("data-row")), int(group.get("data-col")))
        assert key not in cells, f"cell {key} drawn twice"
        cells[key] = (group.find(f"{SVG}text").text, group.find(f"{SVG}rect").get("fill"))
    outlined = {(int(r.get("data-row")), int(r.get("data-col")))
                for r in root.iter(f"{SVG}rect") if r.get("class") == "highlight"}
    return root, cells, outlined


class TinyTV:
    """A 2x4 tile held by 3 threads, one element unowned (-1): drawing geometry only."""

    name = "tiny"

    def owner_table(self):
        thread = np.array([[0, 1, 2, 0], [1, 2, 0, -1]])
        value = np.array([[0, 0, 0, 1], [1, 1, 2, 0]])
        return thread, value


def test_tiny_tv_labels_and_unowned_cell(tmp_path):
    _, cells, outlined = svg_cells(draw_tv(TinyTV(), tmp_path / "t.svg"))
    assert len(cells) == 8 and not outlined
    assert cells[(0, 3)][0] == "T0 V1"
    assert cells[(1, 2)][0] == "T0 V2"
    assert cells[(1, 3)][0] == "-"
    assert cells[(0, 0)][1] == cells[(1, 2)][1]  # both thread 0
    assert cells[(0, 0)][1] != cells[(0, 1)][1]


def test_highlight_cells_and_thread_are_outlined(tmp_path):
    path = draw_tv(TinyTV(), tmp_path / "t.svg", highlight_cells=[(1, 3)], highlight_thread=2)
    _, _, outlined = svg_cells(path)
    assert outlined == {(1, 3), (0, 2), (1, 1)}


def test_highlight_outline_sits_on_its_cell(tmp_path):
    root, _, _ = svg_cells(draw_tv(TinyTV(), tmp_path / "t.svg", highlight_cells=[(1, 2)]))
    cell_rect = next(g.find(f"{SVG}rect") for g in root.iter(f"{SVG}g")
                     if g.get("class") == "cell" and g.get("data-row") == "1"
                     and g.get("data-col") == "2")
    mark = next(r for r in root.iter(f"{SVG}rect") if r.get("class") == "highlight")
    cx, cy = float(cell_rect.get("x")), float(cell_rect.get("y"))
    mx, my = float(mark.get("x")), float(mark.get("y"))
    assert cx <= mx < cx + float(cell_rect.get("width"))
    assert cy <= my < cy + float(cell_rect.get("height"))
    assert root.find(f"{SVG}g[@class='highlights']").get("stroke") == "#e00000"


def test_bad_highlights_are_refused(tmp_path):
    with pytest.raises(DrawError, match=r"\(2, 0\) is outside the 2x4 tile"):
        draw_tv(TinyTV(), tmp_path / "t.svg", highlight_cells=[(2, 0)])
    with pytest.raises(DrawError, match="thread 7 owns no element of tiny"):
        draw_tv(TinyTV(), tmp_path / "t.svg", highlight_thread=7)


def test_unknown_suffix_is_refused_before_drawing(tmp_path):
    with pytest.raises(DrawError, match=r"unknown suffix '\.pdf'.*\.svg, \.png"):
        draw_tv(TinyTV(), tmp_path / "t.pdf")
    assert not (tmp_path / "t.pdf").exists()


def test_warpgroup_threads_get_distinct_stable_colours():
    colours = [thread_colour(t) for t in range(128)]
    assert len(set(colours)) == 128
    assert colours == [thread_colour(t) for t in range(128)]


def test_missing_pillow_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL now raises ImportError
    with pytest.raises(DrawError, match="pip install pillow"):
        draw_tv(TinyTV(), tmp_path / "t.png")


# --- the real Hopper atoms ---------------------------------------------------------------


# Every shape family once (n24: not a power of two); each atom's own correctness is the
# business of tests/layout/hopper.
DRAWN_ATOMS = ["wgmma_acc_m64n8", "wgmma_acc_m64n24", "wgmma_a_rs_16bit", "wgmma_a_rs_8bit",
               "ldmatrix_x4", "ldmatrix_x2_trans", "stmatrix_x1", "stmatrix_x4_trans"]


def test_drawn_atoms_are_registered():
    assert set(DRAWN_ATOMS) <= set(atom_names())


@pytest.mark.parametrize("name", DRAWN_ATOMS)
def test_atom_svg_cells_match_owner_table(name, tmp_path):
    atom = get_atom(name)
    threads, values = atom.owner_table()
    rows, cols = threads.shape
    root, cells, outlined = svg_cells(draw_tv(atom, tmp_path / "a.svg"))
    assert root.tag == f"{SVG}svg"
    assert len(cells) == rows * cols
    assert not outlined
    colour_of_thread = {}
    for (m, n), (label, fill) in cells.items():
        assert label == f"T{threads[m, n]} V{values[m, n]}"
        assert colour_of_thread.setdefault(label.split()[0], fill) == fill
    assert len(set(colour_of_thread.values())) == len(colour_of_thread)


def test_atom_thread_outline_marks_exactly_its_elements(tmp_path):
    atom = get_atom("wgmma_acc_m64n16")
    threads, _ = atom.owner_table()
    thread = int(threads.max())
    _, _, outlined = svg_cells(draw_tv(atom, tmp_path / "a.svg", highlight_thread=thread))
    assert outlined == {(int(m), int(n)) for m, n in zip(*np.nonzero(threads == thread))}


def test_png_has_the_svg_size(tmp_path):
    image_module = pytest.importorskip("PIL.Image")
    atom = get_atom("ldmatrix_x2")
    root, _, _ = svg_cells(draw_tv(atom, tmp_path / "a.svg", highlight_thread=0))
    png = draw_tv(atom, tmp_path / "a.png", highlight_thread=0)
    with image_module.open(png) as image:
        image.verify()
    with image_module.open(png) as image:
        assert image.format == "PNG"
        assert image.size == (int(root.get("width")), int(root.get("height")))


# --- plain layouts -----------------------------------------------------------------------


def test_rank2_layout_cell_shows_its_value(tmp_path):
    layout = parse_layout("(4,8):(8,1)")  # row-major 4x8
    _, cells, _ = svg_cells(draw_layout(layout, tmp_path / "l.svg"))
    assert len(cells) == 32
    assert cells[(0, 0)][0] == "0" and cells[(0, 1)][0] == "1"
    assert cells[(1, 0)][0] == "8" and cells[(3, 7)][0] == "31"
    assert all(label == str(layout((i, j))) for (i, j), (label, _) in cells.items())


def test_rank1_layout_is_one_row(tmp_path):
    _, cells, _ = svg_cells(draw_layout(parse_layout("8:2"), tmp_path / "l.svg"))
    assert sorted(cells) == [(0, j) for j in range(8)]
    assert [cells[(0, j)][0] for j in range(8)] == ["0", "2", "4", "6", "8", "10", "12", "14"]


def test_rank3_layout_is_flattened_with_a_note(tmp_path):
    root, cells, _ = svg_cells(draw_layout(parse_layout("(2,3,4):(1,2,6)"), tmp_path / "l.svg"))
    assert max(cells) == (1, 11)  # (mode 0, rest) = 2 x 12
    assert cells[(1, 0)][0] == "1" and cells[(0, 1)][0] == "2" and cells[(0, 3)][0] == "6"
    notes = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "note"]
    assert notes and "rank-3" in notes[0]


def test_nested_mode0_takes_its_full_size(tmp_path):
    # mode 0 is (2,2):(1,4) -> rows 0,1,4,5 ; mode 1 is 2:2
    _, cells, _ = svg_cells(draw_layout(parse_layout("((2,2),2):((1,4),2)"), tmp_path / "l.svg"))
    assert [cells[(i, 0)][0] for i in range(4)] == ["0", "1", "4", "5"]
    assert [cells[(i, 1)][0] for i in range(4)] == ["2", "3", "6", "7"]
