"""`argus kb search`: ranked techniques by query, op and profile signal; JSON schema;
usage errors exit 2 with one line on stderr."""
import json

import pytest

from argus.agent.knowledge import load_knowledge
from argus.cli.main import main


def _json(capsys, *args):
    code = main(["kb", "search", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_ranks_the_pipeline_technique_first(capsys):
    code, out = _json(capsys, "deeper pipeline stages", "--op", "gemm")
    assert code == 0
    ids = [r["id"] for r in out["results"]]
    assert ids[0] == "gemm-deep-pipeline"
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)


def test_text_output_one_line_per_hit_with_the_recipe(capsys):
    assert main(["kb", "search", "split-k deep K", "--limit", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "gemm-split-k" in lines[0]
    assert "recipe: argus/kernels/gemm_splitk.py::gemm_nt_splitk" in lines[0]


def test_op_filter_excludes_other_ops(capsys):
    _, out = _json(capsys, "online softmax pipeline", "--op", "attention", "--limit", "50")
    assert out["results"] and all("attention" in r["ops"] for r in out["results"])
    assert out["results"][0]["id"].startswith("attn-")


def test_signal_filter_keeps_only_techniques_with_that_signal(capsys):
    _, out = _json(capsys, "--signal", "latency-bound", "--limit", "50")
    expected = {t.id for t in load_knowledge() if "latency-bound" in t.signals}
    assert {r["id"] for r in out["results"]} == expected and len(expected) >= 2
    _, both = _json(capsys, "warp specialisation", "--signal", "latency-bound")
    assert both["results"][0]["id"] == "gemm-warp-specialization"


def test_limit_caps_results(capsys):
    _, out = _json(capsys, "gemm tile", "--limit", "3")
    assert len(out["results"]) == 3 and out["limit"] == 3


def test_json_schema(capsys):
    _, out = _json(capsys, "tma store epilogue", "--op", "gemm", "--signal", "epilogue-exposed")
    assert set(out) == {"schema", "query", "op", "signals", "limit", "results"}
    assert out["schema"] == "argus.kb/1" and out["op"] == "gemm"
    assert out["signals"] == ["epilogue-exposed"]
    first = out["results"][0]
    assert set(first) == {"id", "score", "title", "ops", "signals", "summary", "expected_gain",
                          "recipe", "path", "sources"}
    assert first["id"] == "gemm-tma-store-epilogue"
    assert first["recipe"]["kernel"] == "argus/kernels/gemm.py::gemm_nt"
    assert first["sources"][0].startswith("https://")


def test_no_match_exits_1(capsys):
    assert main(["kb", "search", "qwertyuiop"]) == 1
    assert "no technique matches" in capsys.readouterr().out


@pytest.mark.parametrize("args,needle", [
    (["kb", "search", "x", "--op", "conv"], "--op conv"),
    (["kb", "search", "x", "--signal", "made-up"], "--signal made-up"),
    (["kb", "search", "x", "--limit", "0"], "--limit 0"),
    (["kb", "search", "x", "--limit", "many"], "--limit many"),
    (["kb", "search"], "give a QUERY"),
    (["kb"], "argus kb search"),
])
def test_usage_errors_exit_2_with_one_line(capsys, args, needle):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_every_hit_matches_a_query_word_and_the_limit_applies_after_filtering(capsys):
    from argus.agent.knowledge.search import document_terms

    _, out = _json(capsys, "swizzle", "--op", "gemm", "--limit", "50")
    by_id = {t.id: t for t in load_knowledge()}
    assert out["results"]
    assert all("swizzle" in document_terms(by_id[r["id"]]) for r in out["results"])
    _, one = _json(capsys, "swizzle", "--op", "gemm", "--limit", "1")
    assert [r["id"] for r in one["results"]] == [out["results"][0]["id"]]
