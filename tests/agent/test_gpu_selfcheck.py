"""argus.agent.gpu_selfcheck on the CPU: its coder reply is a kernel proposal the planner's
parser accepts (so on the GPU it takes the coder step's path), and without a GPU both checks
say so instead of pretending."""
import json

from argus.agent import gpu_selfcheck
from argus.agent.gemm_config import SMALLEST
from argus.agent.reply import parse_reply


def test_the_kernel_reply_is_a_coder_step():
    source = (gpu_selfcheck.REPO / "examples" / "gemm.py").read_text()
    reply = gpu_selfcheck.KernelReply(source)
    proposal = parse_reply(reply.complete(None).text, SMALLEST)
    assert proposal.kernel_source.strip() == source.strip() and proposal.config is None
    assert json.loads(reply.complete(None).text) == {"stop": True}


def test_without_a_gpu_both_checks_refuse(monkeypatch, capsys):
    from argus.agent.evaluators import gpu

    monkeypatch.setattr(gpu, "cuda_available", lambda: False)
    assert gpu_selfcheck.main(["coder"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
    assert gpu_selfcheck.main(["profile", "--shape", "256x256x256"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["kind"] for line in lines] == ["unavailable", "unavailable"]
