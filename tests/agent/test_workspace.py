"""The MCP tools' paths are confined to the workspace (issue 19, item 8): absolute paths
elsewhere, `..` and symbolic links that leave it are refused with a message naming the
workspace; paths inside it (relative to it, or absolute) are accepted."""

import os

import pytest

from argus.agent.workspace import ENV, OutsideWorkspace, Workspace


@pytest.fixture
def space(tmp_path):
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    return Workspace(root)


def test_inside_paths_resolve_against_the_workspace(space):
    assert space.path("sub/l.svg", "output") == space.root / "sub" / "l.svg"
    assert space.path(str(space.root / "k.py"), "target") == space.root / "k.py"
    assert space.target("sub/k.py::gemm") == f"{space.root / 'sub' / 'k.py'}::gemm"


@pytest.mark.parametrize("text", ["/etc/passwd", "../x.svg", "sub/../../x.svg", "~/x.svg", ""])
def test_outside_paths_are_refused(space, text):
    with pytest.raises(OutsideWorkspace) as caught:
        space.path(text, "output")
    assert str(space.root) in str(caught.value)


def test_a_symbolic_link_out_of_the_workspace_is_refused(space, tmp_path):
    os.symlink(tmp_path, space.root / "escape")
    with pytest.raises(OutsideWorkspace):
        space.path("escape/x.svg", "output")


def test_the_default_is_the_environment_then_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert Workspace().root == tmp_path.resolve()
    monkeypatch.setenv(ENV, str(tmp_path / "elsewhere"))
    assert Workspace().root == (tmp_path / "elsewhere").resolve()


def test_the_server_refuses_before_running_anything(space, tmp_path):
    pytest.importorskip("mcp")
    import anyio

    from argus.agent.mcp_server import build_server

    server = build_server(space)
    outside = tmp_path / "drawn.svg"

    async def call():
        return await server.call_tool("layout_show", {"layout": "(4,8):(8,1)",
                                                      "output": str(outside)})
    result = anyio.run(call)
    assert "outside the workspace" in str(result) and not outside.exists()
