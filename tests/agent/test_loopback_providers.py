"""The ICRL loop against a local server speaking each wire protocol, through the official
SDKs: the resource counterexample of step 1 must be in the prompt of step 2."""
import json

import pytest

from argus.agent.evaluators import CpuEvaluator
from argus.agent.planner import Budget, IcrlPlanner
from argus.agent.providers import ProviderError, load_config, make_provider

from tests.agent.loopback import LoopbackLLM

TOO_BIG = json.dumps({"technique": "gemm-deep-pipeline",
                      "config": {"BM": 256, "BN": 256, "BK": 128, "stages": 8},
                      "invariants": ["stage = g % S"], "rationale": "go big"})
GOOD = ("Here is my plan.\n```json\n" + json.dumps(
    {"technique": "gemm-large-tile-two-consumers",
     "config": {"BM": 128, "BN": 256, "BK": 64, "stages": 4, "consumers": 2,
                "warp_specialized": True}}) + "\n```")
STOP = json.dumps({"stop": True, "rationale": "good enough"})


def _provider(kind, server, retries="0", timeout="10"):
    base = server.root + ("/v1" if kind == "openai" else "")
    config = load_config(env={"ARGUS_PROVIDER": kind, "ARGUS_MODEL": "scripted-model",
                              "ARGUS_BASE_URL": base, "ARGUS_API_KEY": "test-key",
                              "ARGUS_MAX_RETRIES": retries, "ARGUS_TIMEOUT_S": timeout})
    return make_provider(config)


@pytest.mark.parametrize("kind,path", [("openai", "/v1/chat/completions"),
                                       ("anthropic", "/v1/messages")])
def test_counterexample_reaches_next_prompt(kind, path, task4k):
    with LoopbackLLM([TOO_BIG, GOOD, STOP]) as server:
        provider = _provider(kind, server)
        result = IcrlPlanner(provider, CpuEvaluator(), task4k, budget=Budget(evaluations=10)).run()
    assert server.paths == [path] * 3
    assert all(body["model"] == "scripted-model" for body in server.requests)
    steps = result.trajectory.steps
    assert [s.technique for s in steps] == ["start", "gemm-deep-pipeline",
                                            "gemm-large-tile-two-consumers"]
    assert [s.outcome.status for s in steps] == ["ok", "invalid", "ok"]
    assert steps[1].reward == 0.0 and steps[2].reward > 2.0
    assert result.stop_reason.startswith("planner stopped: good enough")
    prompts = server.user_prompts()
    # Step 1's counterexample (exact numbers) is absent before and present after.
    assert "resource.smem" not in prompts[0]
    assert "shared memory 1048704 B > 232448 B" in prompts[1]
    assert "544 registers" in prompts[1]
    block = prompts[1].split("<tool-output step=1 source=cost_model status=invalid>")[1]
    assert "1048704" in block.split("</tool-output>")[0]
    # The system prompt travels in each protocol's own place.
    if kind == "openai":
        assert server.requests[0]["messages"][0]["role"] == "system"
    else:
        assert "planner of Argus" in server.requests[0]["system"]
    assert result.tokens["input"] > 0 and result.tokens["output"] > 0
    assert result.trajectory.best().config.BN == 256
    headers = {k.lower(): v for k, v in server.headers[0].items()}
    # openai sends a bearer token; anthropic 2.x does too (older SDKs: x-api-key).
    assert headers.get("authorization") == "Bearer test-key" or headers.get("x-api-key") == "test-key"


def test_a_failed_request_is_retried(task4k):
    with LoopbackLLM([503, GOOD, STOP]) as server:
        result = IcrlPlanner(_provider("openai", server, retries="1"), CpuEvaluator(),
                             task4k).run()
    assert len(server.requests) == 3          # 503, its retry, then the stop
    assert [s.outcome.status for s in result.trajectory.steps] == ["ok", "ok"]


def test_a_slow_server_times_out_into_a_provider_error(task4k):
    with LoopbackLLM([3.0, GOOD]) as server:
        result = IcrlPlanner(_provider("openai", server, timeout="0.5"), CpuEvaluator(),
                             task4k).run()
    assert result.stop_reason.startswith("provider failed")
    assert "Timeout" in result.trajectory.steps[-1].reply_error


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_server_error_ends_the_run_with_a_message(kind, task4k):
    with LoopbackLLM([500]) as server:
        result = IcrlPlanner(_provider(kind, server), CpuEvaluator(), task4k).run()
    last = result.trajectory.steps[-1]
    assert last.technique == "provider-error"
    assert result.stop_reason.startswith("provider failed")
    assert "ARGUS_BASE_URL" in last.reply_error
    assert result.trajectory.best().index == 0          # the start config is still the best


def test_config_needs_a_model_for_remote_providers():
    with pytest.raises(ProviderError, match="needs a model"):
        load_config(env={"ARGUS_PROVIDER": "openai"})
