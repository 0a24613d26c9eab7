"""Anthropic's Messages API via the official `anthropic` SDK, imported only when built."""
from __future__ import annotations

from argus.agent.providers.base import ChatRequest, Completion, ProviderError


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, model: str, base_url: str | None, api_key: str | None,
                 timeout_s: float = 120.0, max_retries: int = 2):
        try:
            import anthropic
        except ImportError:
            raise ProviderError("provider 'anthropic' needs the anthropic SDK: "
                                "pip install 'argus-kernels[agent]'") from None
        self._anthropic = anthropic
        self.model = model
        self.base_url = base_url
        self.client = anthropic.Anthropic(api_key=api_key or "EMPTY", base_url=base_url,
                                          timeout=timeout_s, max_retries=max_retries)

    def complete(self, request: ChatRequest) -> Completion:
        turns = [{"role": m.role, "content": m.content} for m in request.turns()]
        kwargs = {"system": request.system} if request.system else {}
        try:
            # No sampling parameters: the anthropic 2.x SDK no longer takes temperature.
            response = self.client.messages.create(
                model=self.model, max_tokens=request.max_tokens, messages=turns, **kwargs)
        except self._anthropic.AnthropicError as err:
            raise ProviderError(f"anthropic endpoint {self.base_url or 'api.anthropic.com'} "
                                f"(model {self.model}) failed: {type(err).__name__}: {err}; "
                                f"check ARGUS_BASE_URL, ARGUS_MODEL and ARGUS_API_KEY") from None
        text = "".join(getattr(block, "text", "") for block in response.content
                       if getattr(block, "type", "") == "text")
        usage = response.usage
        return Completion(text=text, provider=self.name, model=response.model or self.model,
                          input_tokens=getattr(usage, "input_tokens", 0) or 0,
                          output_tokens=getattr(usage, "output_tokens", 0) or 0)
