import pytest

from argus.layout import Layout
from argus.layout.hopper import TVLayout, TVLayoutError, atom_names, get_atom


def test_owner_table_names_a_doubly_held_element():
    # value stride 0: both values of a thread land on one element
    tv = TVLayout("broken", Layout((4, 2), (1, 0)), (4, 2), 4, 2)
    with pytest.raises(TVLayoutError, match=r"element \(0, 0\) is held by both T0 V0 and T0 V1"):
        tv.owner_table()


def test_owner_table_names_an_element_out_of_the_tile():
    tv = TVLayout("wide", Layout((4, 2), (1, 8)), (4, 2), 4, 2)
    with pytest.raises(TVLayoutError, match="outside the 4x2 tile"):
        tv.owner_table()


def test_owner_table_names_an_unowned_element():
    tv = TVLayout("short", Layout((2, 2), (1, 4)), (4, 2), 2, 2)
    with pytest.raises(TVLayoutError, match="no owner"):
        tv.owner_table()


def test_declared_sizes_must_match_the_layout():
    with pytest.raises(TVLayoutError, match="declared"):
        TVLayout("bad", Layout((4, 2)), (4, 2), 8, 1)


@pytest.mark.parametrize("name", [n for n in atom_names() if not n.startswith("wgmma_acc")]
                         + ["wgmma_acc_m64n8", "wgmma_acc_m64n40"])
def test_coord_table_agrees_with_coord(name):
    atom = get_atom(name)
    rows, cols = atom.coord_table()
    for t in range(atom.threads):
        for v in range(atom.values):
            assert atom.coord(t, v) == (rows[t, v], cols[t, v])
