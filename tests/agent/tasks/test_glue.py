"""ModelNew glue: read from its syntax tree, torch compute rejected as a fallback with its
line, allocation and views evaluated over NumPy arrays, kernels launched by name."""
from pathlib import Path

import numpy as np
import pytest

from argus.agent.tasks.glue import GlueError, GlueRunner, read_glue

HEAD = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from argus.lang import kernel

@kernel(grid=(1,), block=128)
def k(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    pass

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n * 2
        self.lin = nn.Linear(n, n)

    def forward(self, x):
'''


def _glue(body: str):
    source = HEAD + "".join(f"        {line}\n" for line in body.splitlines())
    return read_glue(Path("cand.py"), source), source


@pytest.mark.parametrize("body,shown", [
    ("return torch.matmul(x, x)", "torch.matmul(x, x)"),
    ("y = F.softmax(x, dim=1)\nreturn y", "F.softmax(x, dim=1)"),
    ("return x.sum()", "x.sum()"),
    ("y = torch.empty_like(x)\nk(x, y)\nreturn torch.relu(y)", "torch.relu(y)"),
    ("return self.lin(x)", "self.lin(x)"),
])
def test_torch_compute_is_a_fallback_named_by_line(body, shown):
    with pytest.raises(GlueError) as err:
        _glue(body)
    line = HEAD.count("\n") + next(i for i, l in enumerate(body.splitlines()) if shown in l) + 1
    assert str(err.value).startswith(f"cand.py:{line}: `{shown}` is a torch compute op")


def test_tensor_arithmetic_is_caught_when_it_runs():
    glue, source = _glue("y = torch.empty_like(x)\nk(x, y)\nreturn y + x")
    runner = GlueRunner(glue, source, {}, lambda *a: None, [4])
    with pytest.raises(GlueError, match=r"`y \+ x` is a torch compute op"):
        runner.forward([np.ones((64, 64), np.float32)])


def test_allocation_views_parameters_and_launches():
    calls = []

    def launch(name, args, keywords, grid, line):
        calls.append((name, [a.shape for a in args], keywords, grid))
        args[-1][...] = args[0] * 3             # what a kernel would write

    glue, source = _glue("w = self.lin.weight\n"
                         "y = torch.empty(x.shape[0], w.shape[0] // 2, dtype=torch.float32)\n"
                         "k[(x.shape[0] // 64,)](x.contiguous(), y.view(64, 64), BN=self.n)\n"
                         "return y.reshape(64, 64)")
    state = {"lin.weight": np.zeros((128, 4), np.float32)}
    runner = GlueRunner(glue, source, state, launch, [4])
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = runner.forward([x])
    assert calls == [("k", [(64, 64), (64, 64)], {"BN": 8}, (1,))]
    assert np.array_equal(out, x * 3)


def test_empty_is_poisoned_and_unknown_attributes_are_named():
    glue, source = _glue("y = torch.empty_like(x)\nreturn y")
    out = GlueRunner(glue, source, {}, lambda *a: None, [4]).forward([np.ones((2, 2))])
    assert np.isnan(out).all()
    glue, source = _glue("return self.bias")
    with pytest.raises(GlueError, match="self.bias is neither set in __init__ nor a parameter"):
        GlueRunner(glue, source, {}, lambda *a: None, [4]).forward([np.ones((2, 2))])


def test_a_file_without_model_new_or_kernels():
    with pytest.raises(GlueError, match="defines no class ModelNew"):
        read_glue(Path("c.py"), "import torch\n")
    with pytest.raises(GlueError, match="has no @kernel function"):
        read_glue(Path("c.py"), "class ModelNew:\n    def forward(self, x):\n        return x\n")
