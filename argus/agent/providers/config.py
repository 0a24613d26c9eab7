"""Which provider to use: command-line flags > environment variables > a TOML file > default.

Environment variables:
  ARGUS_PROVIDER     embedded (default) | openai | anthropic
  ARGUS_MODEL        model name (required for openai/anthropic)
  ARGUS_BASE_URL     endpoint, e.g. http://localhost:8000/v1 (vLLM), http://localhost:11434/v1
                     (Ollama); unset: the SDK's default (the hosted API)
  ARGUS_API_KEY      key; falls back to OPENAI_API_KEY / ANTHROPIC_API_KEY; "EMPTY" for
                     local servers that want none
  ARGUS_TIMEOUT_S, ARGUS_MAX_RETRIES       per request (default 120 s, 2 retries)
  ARGUS_PRICE_IN, ARGUS_PRICE_OUT          USD per million tokens, for the cost report
  ARGUS_AGENT_CONFIG path of a TOML file with the same keys in lower case under [provider]
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path

from argus.agent.providers.base import ProviderError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROVIDERS = ("embedded", "openai", "anthropic")


@dataclass(frozen=True)
class ProviderConfig:
    provider: str = "embedded"
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    timeout_s: float = 120.0
    max_retries: int = 2
    price_in: float = 0.0
    price_out: float = 0.0

    def public(self) -> dict:
        """The settings without the key (for reports and logs)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"} | {
            "api_key_set": bool(self.api_key)}


_ENV = {"provider": "ARGUS_PROVIDER", "model": "ARGUS_MODEL", "base_url": "ARGUS_BASE_URL",
        "api_key": "ARGUS_API_KEY", "timeout_s": "ARGUS_TIMEOUT_S",
        "max_retries": "ARGUS_MAX_RETRIES", "price_in": "ARGUS_PRICE_IN",
        "price_out": "ARGUS_PRICE_OUT"}


def _coerce(name: str, value, origin: str):
    kind = {f.name: f.type for f in fields(ProviderConfig)}[name]
    try:
        if kind == "float":
            return float(value)
        if kind == "int":
            return int(value)
    except (TypeError, ValueError):
        raise ProviderError(f"{origin}: {name} = {value!r} is not a number") from None
    return str(value)


def load_config(overrides: dict | None = None, env: dict | None = None) -> ProviderConfig:
    env = os.environ if env is None else env
    values: dict = {}
    path = env.get("ARGUS_AGENT_CONFIG")
    if path:
        try:
            table = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("provider", {})
        except (OSError, tomllib.TOMLDecodeError) as err:
            raise ProviderError(f"{path}:1: cannot read the agent config ({err}); it must be "
                                f"TOML with a [provider] table") from None
        for key, value in table.items():
            if key not in _ENV:
                raise ProviderError(f"{path}:1: unknown key {key!r} in [provider]; known: "
                                    f"{', '.join(_ENV)}")
            values[key] = _coerce(key, value, path)
    for key, var in _ENV.items():
        if env.get(var):
            values[key] = _coerce(key, env[var], var)
    for key, value in (overrides or {}).items():
        if value not in (None, ""):
            values[key] = _coerce(key, value, f"--{key.replace('_', '-')}")
    config = replace(ProviderConfig(), **values)
    if config.provider not in PROVIDERS:
        raise ProviderError(f"provider {config.provider!r} is unknown; use one of "
                            f"{', '.join(PROVIDERS)} (ARGUS_PROVIDER or --provider)")
    if not config.api_key and config.provider != "embedded":
        fallback = "OPENAI_API_KEY" if config.provider == "openai" else "ANTHROPIC_API_KEY"
        config = replace(config, api_key=env.get(fallback, ""))
    if config.provider != "embedded" and not config.model:
        raise ProviderError(f"provider {config.provider!r} needs a model: set ARGUS_MODEL or "
                            f"pass --model")
    return config


def make_provider(config: ProviderConfig):
    if config.provider == "embedded":
        from argus.agent.providers.embedded import EmbeddedProvider
        return EmbeddedProvider()
    if config.provider == "openai":
        from argus.agent.providers.openai_provider import OpenAIProvider
        return OpenAIProvider(config.model, config.base_url or None, config.api_key or None,
                              config.timeout_s, config.max_retries)
    from argus.agent.providers.anthropic_provider import AnthropicProvider
    return AnthropicProvider(config.model, config.base_url or None, config.api_key or None,
                             config.timeout_s, config.max_retries)
