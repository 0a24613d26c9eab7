"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang, Ollama) via the
official `openai` SDK, imported only when this provider is built."""
from __future__ import annotations

from argus.agent.providers.base import ChatRequest, Completion, ProviderError


class OpenAIProvider:
    name = "openai"

    def __init__(self, model: str, base_url: str | None, api_key: str | None,
                 timeout_s: float = 120.0, max_retries: int = 2):
        try:
            import openai
        except ImportError:
            raise ProviderError("provider 'openai' needs the openai SDK: "
                                "pip install 'argus-kernels[agent]'") from None
        self._openai = openai
        self.model = model
        self.base_url = base_url
        self.client = openai.OpenAI(api_key=api_key or "EMPTY", base_url=base_url,
                                    timeout=timeout_s, max_retries=max_retries)

    def complete(self, request: ChatRequest) -> Completion:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        try:
            response = self.client.chat.completions.create(
                model=self.model, messages=messages, max_tokens=request.max_tokens,
                temperature=request.temperature)
        except self._openai.OpenAIError as err:
            raise ProviderError(f"openai-compatible endpoint {self.base_url or 'api.openai.com'} "
                                f"(model {self.model}) failed: {type(err).__name__}: {err}; "
                                f"check ARGUS_BASE_URL, ARGUS_MODEL and ARGUS_API_KEY") from None
        if not response.choices:
            raise ProviderError(f"endpoint {self.base_url} returned no choices")
        text = response.choices[0].message.content or ""
        usage = response.usage
        return Completion(text=text, provider=self.name, model=response.model or self.model,
                          input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          output_tokens=getattr(usage, "completion_tokens", 0) or 0)
