"""argus.ops.matmul as a PyTorch op (argus/ops/torch_ops.py, registry.py), on the CPU: the
fake implementation under FakeTensorMode and on meta tensors, torch.library.opcheck, autograd
against fp64 products, and torch.compile(fullgraph=True) of a small model against eager. The
computing runs on the interpreter (ARGUS_INTERPRET=1), the DSL kernels' CPU path: there is
no torch fallback."""

import pytest

torch = pytest.importorskip("torch")

import argus.ops as ops  # noqa: E402
from argus.runtime.launch_errors import LaunchError  # noqa: E402

BF16 = torch.bfloat16


@pytest.fixture(autouse=True)
def interpret(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))     # no tuned entry from elsewhere


def rand(*shape, seed=0, dtype=BF16, **kw):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).requires_grad_(kw.get("grad", False))


def close(got, want):
    """Within a few bf16 ulps of an fp64 product (one rounding of an fp32 sum)."""
    got = got.double()
    return torch.allclose(got, want, rtol=2 ** -6, atol=2 ** -6 * want.abs().max().item())


def test_the_op_is_registered_under_the_argus_namespace():
    assert torch.ops.argus.matmul.default._schema.name == "argus::matmul"


@pytest.mark.parametrize("b_layout", ["kn", "nk"])
def test_fake_tensors_get_shape_dtype_and_strides_without_computing(b_layout):
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(100, 256, dtype=torch.float16)
        b = torch.empty(256, 72, dtype=torch.float16) if b_layout == "kn" else \
            torch.empty(72, 256, dtype=torch.float16).t()
        c = ops.matmul(a, b)
    assert isinstance(c, FakeTensor)
    assert (tuple(c.shape), c.dtype, c.stride()) == ((100, 72), torch.float16, (72, 1))


def test_meta_tensors_run_the_fake_implementation():
    a = torch.empty(48, 64, dtype=BF16, device="meta")
    c = ops.matmul(a, torch.empty(64, 128, dtype=BF16, device="meta"))
    assert c.is_meta and tuple(c.shape) == (48, 128) and c.dtype == BF16


@pytest.mark.parametrize("a, b, message", [
    ((4, 8), (16, 8), "shapes do not chain"),
    ((0, 12), (12, 8), "empty product"),
])
def test_the_fake_implementation_refuses_what_the_kernel_refuses(a, b, message):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(), pytest.raises(LaunchError, match=message):
        torch.ops.argus.matmul(torch.empty(*a, dtype=BF16), torch.empty(*b, dtype=BF16))


def test_opcheck_passes_schema_fake_autograd_and_aot_dispatch():
    from torch.library import opcheck

    a, b = rand(64, 128, seed=1), rand(128, 64, seed=2)
    result = opcheck(torch.ops.argus.matmul.default, (a, b, False))
    assert set(result.values()) == {"SUCCESS"}, result


@pytest.mark.parametrize("m, b_layout", [(64, "kn"), (64, "nk"), (20, "kn")])
def test_backward_runs_through_the_op_and_matches_fp64(m, b_layout, monkeypatch):
    a = rand(m, 128, seed=3, grad=True)
    w = rand(64, 128, seed=4, grad=True) if b_layout == "nk" else rand(128, 64, seed=4, grad=True)
    b = w.t() if b_layout == "nk" else w
    grad_c = rand(m, 64, seed=5)
    calls = []
    real = ops.torch_ops.matmul_into
    monkeypatch.setattr(ops.torch_ops, "matmul_into",
                        lambda *args: calls.append(args[0].shape) or real(*args))
    c = ops.matmul(a, b)
    c.backward(grad_c)
    assert len(calls) == 3                       # forward, dA and dB all through the op
    a64, b64, g64 = a.detach().double(), b.detach().double(), grad_c.double()
    assert close(c.detach(), a64 @ b64)
    assert close(a.grad, g64 @ b64.T)
    assert close(w.grad, (a64.T @ g64).T if b_layout == "nk" else a64.T @ g64)


class TwoLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Parameter(rand(128, 64, seed=6) * 0.1)      # x @ W.T (N x K)
        self.down = torch.nn.Parameter(rand(128, 64, seed=7) * 0.1)    # x @ W (K x N)

    def forward(self, x):
        return ops.matmul(torch.relu(ops.matmul(x, self.up.t())), self.down)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_fullgraph_of_a_model_matches_eager(backend):
    torch._dynamo.reset()
    model, x = TwoLayer(), rand(64, 64, seed=8)
    want = model(x)
    got = torch.compile(model, fullgraph=True, backend=backend)(x)
    assert torch.equal(got, want)
    got.float().sum().backward()
    assert model.up.grad is not None and model.up.grad.shape == (128, 64)


def test_the_compiled_graph_holds_the_op_as_one_node():
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    model, x = TwoLayer(), rand(64, 64, seed=9)
    torch.compile(model, fullgraph=True, backend=backend)(x)
    targets = [n.target for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert targets.count(torch.ops.argus.matmul) == 2    # the packet: dynamo keeps the call


def test_without_the_interpreter_a_cpu_call_says_how_to_run(monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "0")
    monkeypatch.setattr("argus.runtime.compiled.build_launcher", _launcher_without_cubin)
    with pytest.raises(LaunchError, match="(no CUDA GPU is visible.*ARGUS_INTERPRET=1)|"
                                          "(is on cpu; move it to the GPU)"):
        ops.matmul(rand(64, 64), rand(64, 64))


def _launcher_without_cubin(ir, debug):
    from argus.codegen import generate
    from argus.runtime.launch import Launcher
    return Launcher(generate(ir), b"", ir)
