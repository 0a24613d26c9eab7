"""`argus run` never imports the kernel file (issue 19, item 8): module-level code of an
untrusted file never runs, and its reference runs in an isolated child that may not write
files, read outside Python, start processes or open sockets; each refusal names the
file:line."""

import ast
import os
from pathlib import Path

import pytest

from argus.agent import commands
from argus.cli.main import main
from argus.cli.reference_source import kept_source, read_reference

BASE = (Path(__file__).resolve().parents[1] / "frontend" / "data" / "inputs"
        / "small_copy.py").read_text()
SHAPE = ["--shape", "M=64,N=64"]


def _file(tmp_path, text, name="evil.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _with_module_code(code: str) -> str:
    return BASE.replace("import numpy as np\n", "import numpy as np\n" + code + "\n", 1)


def _with_reference_code(code: str) -> str:
    return BASE.replace("def reference(X):\n", f"def reference(X):\n    {code}\n", 1)


def test_module_code_that_creates_a_file_never_runs(tmp_path, monkeypatch, capsys):
    marker = tmp_path / "created_at_import"
    path = _file(tmp_path, _with_module_code(
        f"import os\nopen({str(marker)!r}, 'w').write('ran')\nos.system('touch {marker}.sh')\n"
        f"class Boom:\n    open({str(marker)!r} + '.class', 'w')\n"
        f"@print\ndef decorated():\n    pass\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["run", f"{path}::small_copy", "--interpret", *SHAPE]) == 0
    assert capsys.readouterr().out.strip().endswith("PASS")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.py"]


def test_the_mcp_tool_does_not_run_module_code_either(tmp_path):
    marker = tmp_path / "created_at_import"
    path = _file(tmp_path, _with_module_code(f"open({str(marker)!r}, 'w').write('ran')"))
    out = commands.run_interpret(f"{path}::small_copy", "M=64,N=64")
    assert out["passed"], out
    assert not marker.exists()


@pytest.mark.parametrize("code, words", [
    ("open('written_by_reference', 'w').write('x')", "may not write files"),
    ("import os; os.open('written_by_reference', os.O_CREAT | os.O_WRONLY)", "may not write"),
    ("import os; os.system('touch written_by_reference')", "may not do os.system"),
    ("import subprocess; subprocess.run(['touch', 'written_by_reference'])", "subprocess.Popen"),
    ("open('/etc/hostname').read()", "may not read /etc/hostname"),
    ("import socket; socket.create_connection(('127.0.0.1', 9))", "may not do socket"),
    ("import os; os.remove(__file__)", "may not do os.remove"),
    ("raise SystemExit(0)", "SystemExit"),
])
def test_the_reference_is_refused_what_it_has_no_business_doing(code, words, tmp_path,
                                                                 monkeypatch, capsys):
    path = _file(tmp_path, _with_reference_code(code))
    monkeypatch.chdir(tmp_path)
    assert main(["run", f"{path}::small_copy", "--interpret", *SHAPE]) == 2
    err = capsys.readouterr().err
    line = BASE[:BASE.index("def reference")].count("\n") + 2
    assert f"{path}:{line}: reference(...) failed: " in err and words in err, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.py"]


def test_the_child_sees_none_of_the_parents_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARGUS_SECRET_TOKEN", "s3cret")
    path = _file(tmp_path, _with_reference_code(
        "import os; assert 'ARGUS_SECRET_TOKEN' not in os.environ, 'leaked'"))
    assert main(["run", f"{path}::small_copy", "--interpret", *SHAPE]) == 0


def test_module_constants_reach_the_reference_specialised(tmp_path, capsys):
    """SCALE is a module constant (never executed: the frontend's folded value is passed),
    and --const replaces it for the kernel and the reference alike."""
    text = BASE.replace("import numpy as np\n", "import numpy as np\n\nSCALE = 2\n", 1)
    text = text.replace("store(tile(Y, (BM, BN), (tm, tn)), x)",
                        "store(tile(Y, (BM, BN), (tm, tn)), x * SCALE)")
    text = text.replace("return np.array(X, copy=True)", "return np.asarray(X) * SCALE")
    path = _file(tmp_path, text)
    assert main(["run", f"{path}::small_copy", "--interpret", *SHAPE]) == 0
    assert main(["run", f"{path}::small_copy", "--interpret", *SHAPE, "--const", "SCALE=3"]) == 0


def test_kept_source_keeps_imports_and_plain_functions_only():
    text = ("import numpy as np; open('x', 'w')\n"
            "import math\n"
            "from argus.lang import kernel\n"
            "import os\n"
            "K = 4\n"
            "print('module code')\n"
            "@kernel\n"
            "def k():\n    pass\n"
            "def reference(X, scale=2.0):\n    return X * math.pi\n")
    kept = kept_source(ast.parse(text), text)
    assert kept.splitlines() == ["", "import math", "", "", "", "", "", "", "",
                                 "def reference(X, scale=2.0):", "    return X * math.pi"]


def test_read_reference_reads_parameters_without_running(tmp_path):
    path = _file(tmp_path, "import os\nos.system('false')\n"
                           "def reference_k(A, B, causal=True, scale=os.sep):\n    return A\n"
                           "def inputs(rng, symbols):\n    return {}\n")
    ref = read_reference(path, "k")
    assert (ref.name, ref.params, ref.line, ref.has_inputs) == \
        ("reference_k", ("A", "B", "causal", "scale"), 3, True)
    assert ref.defaults == {"causal": True, "scale": None}


def test_a_file_without_reference_names_the_file(tmp_path, capsys):
    path = _file(tmp_path, BASE[:BASE.index("def reference")])
    assert main(["run", f"{path}::small_copy", "--interpret", *SHAPE]) == 2
    assert f"{path}:1: defines no reference" in capsys.readouterr().err
