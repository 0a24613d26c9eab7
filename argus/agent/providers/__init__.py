"""LLM providers behind one interface, chosen by configuration (see config.py)."""
from argus.agent.providers.base import ChatRequest, Completion, Message, Provider, ProviderError
from argus.agent.providers.config import ProviderConfig, load_config, make_provider

__all__ = ["ChatRequest", "Completion", "Message", "Provider", "ProviderError",
           "ProviderConfig", "load_config", "make_provider"]
