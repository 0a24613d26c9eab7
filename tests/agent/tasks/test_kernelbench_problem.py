"""Building a KernelBench problem in its isolated child: the reference outputs, the
parameters shared by name, the baselines, and one-line errors naming the problem's line."""
from pathlib import Path

import numpy as np
import pytest

from argus.agent.task import TaskError
from argus.agent.tasks.kernelbench import kernelbench_task

REPO = Path(__file__).resolve().parents[3]


def test_problem_with_parameters_and_init_inputs():
    task = kernelbench_task(REPO / "tests/fixtures/kernelbench/gemm_relu.py", sets=2)
    assert task.mode == "model" and task.init_args == [128, 256]
    assert set(task.state) == {"linear.weight"} and task.state["linear.weight"].shape == (256, 128)
    x, w = task.input_sets[1]["0"], task.state["linear.weight"]
    want = np.maximum(x.astype(np.float64) @ w.T, 0.0) * 2.0
    assert np.allclose(task.expected[1]["0"], want, atol=1e-4)
    assert not np.array_equal(task.input_sets[0]["0"], task.input_sets[1]["0"])
    eager, compiled = task.baselines["eager PyTorch"], task.baselines["torch.compile"]
    assert eager["ops"] >= 3 and eager["time_ms"] > compiled["time_ms"] > 0
    assert task.flops == 2 * 256 * 128 * 256


@pytest.mark.parametrize("text,message,line", [
    ("import torch\ndef get_inputs():\n    return []\n", "defines no Model, get_init_inputs", 1),
    ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
     "        return x\n\ndef get_inputs():\n    raise ValueError('no inputs')\n\n"
     "def get_init_inputs():\n    return []\n", "ValueError: no inputs", 8),
    ("import socket\nsocket.create_connection(('127.0.0.1', 9))\n", "network", 2),
    ("def broken(:\n", "SyntaxError", 1),
])
def test_a_broken_problem_is_an_error_naming_its_line(tmp_path, text, message, line):
    path = tmp_path / "problem.py"
    path.write_text(text)
    with pytest.raises(TaskError) as err:
        kernelbench_task(path, sets=1)
    assert str(err.value).startswith(f"{path}:{line}:") and message in str(err.value)


@pytest.mark.parametrize("gpu", [False, True])
def test_on_a_gpu_machine_the_problem_child_keeps_cuda_and_no_address_limit(monkeypatch, gpu):
    """A CUDA context reserves far more virtual memory than the reference's 16 GiB limit (on
    the H100 the child died 'CUDA error: out of memory' under it), and torch.compile needs
    the toolchain's PATH: both only where the baselines are measured on a GPU."""
    import subprocess

    from argus.agent.tasks import kernelbench as kb

    seen = {}
    real = subprocess.run

    def run(cmd, **kw):
        seen.update(kw)
        return real(cmd, **kw)
    monkeypatch.setattr(kb.subprocess, "run", run)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    reply, _, _ = kb.build_problem(REPO / "tests/fixtures/kernelbench/relu.py", 1, 0, gpu=gpu)
    assert reply["ok"]
    assert seen["preexec_fn"] is (kb._gpu_limits if gpu else kb._limits)
    assert (seen["env"].get("CUDA_VISIBLE_DEVICES") == "3") is gpu
    assert seen["env"]["TMPDIR"] == seen["env"]["HOME"]      # writes stay in the job folder


def test_the_problem_may_write_dev_null_but_nothing_else_outside_its_folder(tmp_path):
    """torch.compile opens os.devnull for its compiler children (on the H100 every
    torch.compile baseline failed 'may not write /dev/null'); any other path outside the
    job folder is still refused."""
    body = ("import torch\nimport torch.nn as nn\n{write}\nclass Model(nn.Module):\n"
            "    def forward(self, x):\n        return x\n\ndef get_inputs():\n"
            "    return [torch.ones(2)]\n\ndef get_init_inputs():\n    return []\n")
    quiet = tmp_path / "quiet.py"
    quiet.write_text(body.format(write="import os\nopen(os.devnull, 'w').write('x')"))
    assert kernelbench_task(quiet, sets=1).expected[0]["0"].tolist() == [1.0, 1.0]
    loud = tmp_path / "loud.py"
    loud.write_text(body.format(write=f"open({str(tmp_path / 'out.txt')!r}, 'w')"))
    with pytest.raises(TaskError, match="may not write"):
        kernelbench_task(loud, sets=1)
