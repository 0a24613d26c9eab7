"""`argus bench attention` from the command line, on a machine without a GPU: one line on
stderr and exit 2, for a bad shape too (no traceback)."""

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")


def _run(*args):
    return subprocess.run([sys.executable, "-m", "argus.cli.main", "bench", "attention", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU it measures")
def test_without_a_gpu_it_says_so_in_one_line():
    r = _run("--timing")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no CUDA GPU" in lines[0] and "Traceback" not in r.stderr


def test_a_bad_shape_is_a_usage_error():
    r = _run("--shapes", "4x16x4096")
    assert r.returncode == 2
    assert "want BxHQxHKxSQxSKxD" in r.stderr and "Traceback" not in r.stderr
