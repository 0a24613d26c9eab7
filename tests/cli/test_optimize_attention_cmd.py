"""`argus optimize attention --shape B,HQ,HK,SQ,SK,D`: the knob planner on a CPU (the cost
model's ranking, said to be no timing), its one-line usage errors, and the routes that keep
the whole-kernel task (--kernel, a SYM=N shape)."""
import json

import pytest

from argus.agent.attention.task import parse_attention_shape
from argus.cli.main import main


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path):
    from argus.ops import attention_tuned

    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    attention_tuned.forget()
    yield
    attention_tuned.forget()


def test_shape_syntax():
    t = parse_attention_shape("4,16,8,4096,2048,128", causal=True, dtype="bfloat16")
    assert (t.b, t.hq, t.hk, t.sq, t.sk, t.d, t.causal, t.dtype) == \
        (4, 16, 8, 4096, 2048, 128, True, "bf16")
    assert parse_attention_shape("4x16x16x4096x4096x128c").causal
    assert parse_attention_shape("1,2,2,64,64,64", dtype="fp16").dtype == "fp16"


def test_a_cpu_run_ranks_by_the_model_and_writes_the_cache(tmp_path, capsys, monkeypatch):
    from argus.agent.attention import space
    monkeypatch.setattr(space, "compiler_available", lambda: False)     # no builds: fast
    code = main(["optimize", "attention", "--shape", "16,16,16,1024,1024,64", "--evaluator",
                 "cpu", "--budget", "4", "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "[  3]" in err and "(model)" in err
    assert "a ranking, not timings" in out and "timings need a GPU" in out
    assert "space: 216 configurations accepted" in out
    assert "tuned cache: written as predicted" in out
    best = json.loads((tmp_path / "o" / "best_config.json").read_text())
    assert best["evaluations"] == 4 and best["best"]["basis"] == "predicted"


@pytest.mark.parametrize("argv, message", [
    (["--shape", "4,16,16,4096,4096"], "is not B,HQ,HK,SQ,SK,D"),
    (["--shape", "4,16,16,4096,4096,96"], "head dim D=96 is not supported"),
    (["--shape", "4,16,3,4096,4096,128"], "multiple of the key/value heads"),
    (["--shape", "4,0,1,4096,4096,128"], "positive integer"),
    (["--shape", "1,2,2,64,64,64", "--dtype", "fp8"], "dtype 'fp8' is not supported"),
    (["--shape", "1,2,2,64,64,64", "--budget", "0"], "budget"),
    (["--shape", "1,2,2,64,64,64", "--provider", "openai"], "embedded planner only"),
    ([], "needs --shape B,HQ,HK,SQ,SK,D"),
])
def test_bad_input_is_a_one_line_usage_error(argv, message, capsys):
    assert main(["optimize", "attention", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_the_whole_kernel_task_stays_reachable():
    from argus.cli.optimize_attention_cmd import wants_planner
    from argus.cli.main import build_parser

    parser = build_parser()
    parse = lambda *a: parser.parse_args(["optimize", "attention", *a])   # noqa: E731
    assert wants_planner(parse("--shape", "4,16,16,4096,4096,128"))
    assert not wants_planner(parse("--kernel", "--shape", "T=256"))
    assert not wants_planner(parse("--shape", "T=256"))
    assert not wants_planner(parse("--start", "x.py", "--shape", "1,1,1,1,1,64"))


def test_help_documents_both_routes(capsys):
    assert main(["optimize", "--help"]) == 0
    out = capsys.readouterr().out
    assert "B,HQ,HK,SQ,SK,D" in out and "--kernel" in out and "--causal" in out
