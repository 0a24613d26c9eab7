"""`argus mcp`: the official mcp SDK's stdio client lists the tools and calls every one;
paths outside the workspace folder are refused."""
import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXPECTED = {"check", "compile", "run_interpret", "layout_show", "knowledge_search",
            "knowledge_get", "cost_model", "optimize", "bench", "profile", "dsl_guide"}


def _payload(result):
    assert result.content, result
    return json.loads(result.content[0].text)


async def _session_calls(tmp_path):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    space = tmp_path / "workspace"
    space.mkdir()
    for name in ("copy.py", "gemm.py"):
        shutil.copy(EXAMPLES / name, space / name)
    outside = tmp_path / "outside.svg"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "argus.cli.main", "mcp", "--workspace", str(space)],
                                   cwd=str(Path(__file__).resolve().parents[2]))
    copy = "copy.py::copy"     # relative to the workspace
    calls = {
        "check": {"target": str(space / "gemm.py")},
        "compile": {"target": copy, "emit": "ir"},
        "run_interpret": {"target": copy, "shape": "M=64,N=64"},
        "layout_show": {"layout": "(4,8):(8,1)", "output": str(space / "l.svg")},
        "knowledge_search": {"query": "split k", "shape": "128x4096x4096", "top_k": 3},
        "knowledge_get": {"technique_id": "gemm-warp-specialization"},
        "cost_model": {"shape": "4096x4096x4096",
                       "config": {"BM": 128, "BN": 256, "consumers": 2, "stages": 4,
                                  "warp_specialized": True}},
        "optimize": {"shape": "4096x4096x4096", "budget": 3},
        "bench": {"shape": "4096x4096x4096"},
        "profile": {"shape": "4096x4096x4096"},
        "dsl_guide": {"max_chars": 12000},
    }
    results = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            results["_tools"] = {t.name: t for t in listed.tools}
            for name, args in calls.items():
                results[name] = _payload(await session.call_tool(name, args))
            results["_bad"] = await session.call_tool("cost_model", {"shape": "4096x4096x4096",
                                                                     "config": {"BM": 96}})
            results["_outside_layout"] = _payload(await session.call_tool(
                "layout_show", {"layout": "(4,8):(8,1)", "output": str(outside)}))
            results["_outside_dotdot"] = _payload(await session.call_tool(
                "layout_show", {"layout": "(4,8):(8,1)", "output": "../escaped.svg"}))
            results["_outside_check"] = _payload(await session.call_tool(
                "check", {"target": str(EXAMPLES / "gemm.py")}))
            results["_outside_run"] = _payload(await session.call_tool(
                "run_interpret", {"target": "/etc/passwd::copy"}))
    results["_written_outside"] = outside.exists() or (tmp_path / "escaped.svg").exists()
    return results


def test_every_tool_answers_over_stdio(tmp_path):
    r = anyio.run(_session_calls, tmp_path)
    assert set(r["_tools"]) == EXPECTED
    assert "shape" in r["_tools"]["cost_model"].input_schema["properties"]
    kernels = r["check"]["result"]["kernels"]       # names, or records with a name
    assert r["check"]["ok"] and [k if isinstance(k, str) else k["name"] for k in kernels] == ["gemm"]
    assert r["compile"]["ok"] and "kernel @copy" in r["compile"]["stdout"]
    assert r["run_interpret"]["passed"]
    assert r["layout_show"]["ok"] and "<svg" in (tmp_path / "workspace" / "l.svg").read_text()
    assert r["knowledge_search"]["results"][0]["id"] == "gemm-split-k"
    assert "skinny" in r["knowledge_search"]["shape_classes"]
    assert r["knowledge_get"]["technique"]["sources"][0]["url"].startswith("https://")
    assert r["cost_model"]["ok"] and r["cost_model"]["prediction"]["tflops"] > 100
    assert r["optimize"]["ok"] and r["optimize"]["summary"]["evaluations"] == 3
    assert r["bench"]["available"] is False and "CUDA" in r["bench"]["error"]
    if not r["profile"]["available"]:                # a CPU-only machine (CI)
        assert r["profile"]["kind"] == "unavailable" and "no GPU" in r["profile"]["reason"]
    assert "## wgmma" in r["dsl_guide"]["guide"] and r["dsl_guide"]["chars"] <= 12000
    bad = _payload(r["_bad"])
    assert bad["ok"] is False and "BM=96 is not admissible" in bad["error"]
    for refused in ("_outside_layout", "_outside_dotdot", "_outside_check", "_outside_run"):
        assert r[refused]["ok"] is False and "outside the workspace" in r[refused]["error"]
    assert not r["_written_outside"]
