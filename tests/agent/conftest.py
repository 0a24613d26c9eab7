import pytest

from argus.agent.task import GemmTask

# Provider variables of the developer's shell must not leak into the tests.
_VARS = ("ARGUS_PROVIDER", "ARGUS_MODEL", "ARGUS_BASE_URL", "ARGUS_API_KEY", "ARGUS_AGENT_CONFIG",
         "ARGUS_TIMEOUT_S", "ARGUS_MAX_RETRIES", "ARGUS_AGENT_DB", "OPENAI_API_KEY",
         "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "HTTP_PROXY",
         "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")


@pytest.fixture(autouse=True)
def clean_provider_env(monkeypatch):
    for var in _VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def task4k():
    return GemmTask(4096, 4096, 4096)
