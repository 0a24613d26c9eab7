import pytest

from argus.layout.hopper import TVLayoutError, atom_names, get_atom


def test_registry_holds_the_atom_families():
    names = atom_names()
    for n in range(8, 257, 8):
        assert f"wgmma_acc_m64n{n}" in names
    for name in ["wgmma_a_rs_16bit", "wgmma_a_rs_8bit", "ldmatrix_x1", "ldmatrix_x4_trans",
                 "stmatrix_x2", "stmatrix_x4_trans"]:
        assert name in names
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name", atom_names())
def test_every_atom_is_a_bijection_named_as_registered(name):
    atom = get_atom(name)
    assert atom.name == name
    threads, _ = atom.owner_table()
    assert threads.shape == atom.tile


def test_unknown_atom():
    with pytest.raises(TVLayoutError, match="unknown atom 'wgmma_acc_m64n7'"):
        get_atom("wgmma_acc_m64n7")
