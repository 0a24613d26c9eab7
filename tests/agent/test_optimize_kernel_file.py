"""`argus optimize FILE.py::KERNEL` against the loopback server: a wrong candidate's
summary reaches the next request in full; a candidate that tries to run code (top level,
in ModelNew) is parsed, never executed."""
import json
from pathlib import Path

from argus.cli.main import main

from tests.agent.loopback import LoopbackLLM

REPO = Path(__file__).resolve().parents[2]
COPY = REPO / "examples/copy.py"


def _edit(old: str, new: str) -> str:
    return (json.dumps({"technique": "scale"}) + f"\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n"
            ">>>>>>> REPLACE\n")


def test_file_task_wrong_answer_then_stop(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    script = [_edit("    store(dst, x)", "    store(dst, x * 2.0)"), '{"stop": true}']
    with LoopbackLLM(script) as server:
        monkeypatch.setenv("ARGUS_API_KEY", "k")
        monkeypatch.setenv("ARGUS_MAX_RETRIES", "0")
        code = main(["optimize", f"{COPY}::copy", "--shape", "M=128,N=128", "--provider",
                     "openai", "--model", "m", "--base-url", server.root + "/v1",
                     "--out", str(out), "--budget", "3"])
    assert code == 0                                   # the start kernel is correct
    printed = capsys.readouterr().out
    assert "ESTIMATED" in printed and "best: step 0" in printed
    steps = json.loads((out / "trajectory.json").read_text())["steps"]
    assert steps[1]["outcome"]["status"] == "incorrect"
    second = server.user_prompts()[1]
    block = second.split("<tool-output step=1 source=interpreter status=incorrect>")[1]
    for i in range(3):
        assert f"input set {i}: output Y:" in block
    assert "worst at" in block and "first off at" in block


def test_candidate_code_is_never_executed(tmp_path, monkeypatch, capsys):
    marker = tmp_path / "ran"
    source = (REPO / "tests/fixtures/kernelbench/answers/relu_new.py").read_text()
    evil = (f"import os\nos.system('touch {marker}')\nopen('{marker}', 'w').write('x')\n"
            + source.replace("        y = torch.empty_like(x)\n",
                             f"        y = torch.empty_like(x)\n        q = open('{marker}', 'w')\n"))
    reply = json.dumps({"technique": "evil"}) + f"\n```python\n{evil}```\n"
    with LoopbackLLM([reply, '{"stop": true}']) as server:
        monkeypatch.setenv("ARGUS_API_KEY", "k")
        monkeypatch.setenv("ARGUS_MAX_RETRIES", "0")
        code = main(["optimize", "--kernelbench", str(REPO / "tests/fixtures/kernelbench/relu.py"),
                     "--provider", "openai", "--model", "m", "--base-url", server.root + "/v1",
                     "--out", str(tmp_path / "out"), "--budget", "2", "--json"])
    assert code == 1 and not marker.exists()
    step = json.loads((tmp_path / "out/trajectory.json").read_text())["steps"][0]
    assert step["outcome"]["status"] == "invalid"
    assert "is a torch compute op (a fallback)" in step["outcome"]["feedback"]
    assert "open(" in step["outcome"]["feedback"]


def test_a_dtype_flag_is_refused_for_a_kernel_task(tmp_path, capsys):
    """A kernel task's dtypes are its file's: `--dtype fp8` was ignored and the bf16 kernel
    'optimised' (exit 0); it is a usage error before anything runs."""
    for target in ("moe", f"{COPY}::copy"):
        out = tmp_path / target.replace("/", "_")
        assert main(["optimize", target, "--dtype", "fp8", "--provider", "openai", "--model",
                     "m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "--dtype fp8: a kernel task's dtypes are its kernel file's" in err
        assert err.count("\n") == 1 and not out.exists()
