from collections import Counter
from pathlib import Path

import pytest

from argus.agent.embedded_policy import apply_move
from argus.agent.gemm_config import SMALLEST
from argus.agent.knowledge import KnowledgeError, load_dir, load_knowledge, search

REPO = Path(__file__).resolve().parents[2]


def test_at_least_thirty_techniques_across_the_three_ops():
    techniques = load_knowledge()
    assert len(techniques) >= 30
    per_op = Counter(op for t in techniques for op in t.ops)
    assert per_op["gemm"] >= 15 and per_op["attention"] >= 8 and per_op["moe"] >= 8


def test_every_technique_has_a_public_source_and_applicability():
    for t in load_knowledge():
        assert t.sources and all(s.url.startswith("https://") and len(s.says) > 20
                                 for s in t.sources), t.id
        assert t.when and t.summary and t.expected_gain, t.id
        assert Path(t.path).name == f"{t.id}.toml"


def test_gemm_moves_apply_to_the_smallest_config():
    movers = [t for t in load_knowledge() if t.moves]
    assert len(movers) >= 10
    for t in movers:
        assert any(apply_move(SMALLEST, m) is not None for m in t.moves) or t.id in (
            "gemm-two-ctas-per-sm",), t.id


def test_examples_named_by_techniques_exist_and_parse():
    from argus.frontend import parse_file

    examples = {t.example for t in load_knowledge() if t.example}
    assert examples
    for example in examples:
        assert parse_file(REPO / example), example


def test_search_ranks_by_query_op_shape_and_signal():
    top = [t.id for _, t in search("deeper pipeline stages latency", op="gemm", top_k=3)]
    assert top[0] == "gemm-deep-pipeline"
    skinny = [t.id for _, t in search("", op="gemm", shape_classes=["skinny"],
                                      signals=["low-occupancy"], top_k=3)]
    assert "gemm-split-k" in skinny
    attention = search("softmax exp overlap", op="attention", top_k=5)
    assert all("attention" in t.ops for _, t in attention)
    assert attention[0][1].id in ("attn-pingpong-softmax", "attn-exp2-prescale")
    scores = [s for s, _ in search("tma", top_k=10)]
    assert scores == sorted(scores, reverse=True)


def _write(tmp_path, name, text):
    d = tmp_path / "kb"
    d.mkdir(exist_ok=True)
    (d / name).write_text(text)
    return d


GOOD = open(Path(load_knowledge()[0].path)).read()


def test_bad_toml_names_file_and_line(tmp_path):
    d = _write(tmp_path, "x.toml", 'id = "x"\ntitle = "unterminated\n')
    with pytest.raises(KnowledgeError, match=r"x\.toml:2: not valid TOML"):
        load_dir(d)


def test_schema_errors_name_the_line_of_the_field(tmp_path):
    stem = Path(load_knowledge()[0].path).stem
    text = GOOD.replace('ops = [', 'ops = ["gpu-magic", ')
    d = _write(tmp_path, f"{stem}.toml", text)
    line = text[:text.index("ops = [")].count("\n") + 1
    with pytest.raises(KnowledgeError, match=rf"{stem}\.toml:{line}: ops must be"):
        load_dir(d)


def test_move_on_unknown_knob_and_missing_source_are_rejected(tmp_path):
    stem = Path(load_knowledge()[0].path).stem
    bad_move = GOOD.replace("moves = [", 'moves = [{warp_size = 64}, ', 1)
    with pytest.raises(KnowledgeError, match="unknown GEMM knob 'warp_size'"):
        load_dir(_write(tmp_path, f"{stem}.toml", bad_move))
    no_source = GOOD[:GOOD.index("[[sources]]")]
    with pytest.raises(KnowledgeError, match="sources"):
        load_dir(_write(tmp_path, f"{stem}.toml", no_source))


def test_id_must_match_file_name(tmp_path):
    with pytest.raises(KnowledgeError, match="must equal the file name"):
        load_dir(_write(tmp_path, "other-name.toml", GOOD))
