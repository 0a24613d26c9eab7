"""The embedded default provider: no network, no model; answers from embedded_policy."""
from __future__ import annotations

import json

from argus.agent.providers.base import ChatRequest, Completion, ProviderError


class EmbeddedProvider:
    name = "embedded"
    model = "knowledge-guided-bandit"

    def complete(self, request: ChatRequest) -> Completion:
        from argus.agent.embedded_policy import propose

        if request.context is None:
            raise ProviderError("the embedded planner needs the planner context; it cannot "
                                "answer a free-form prompt")
        return Completion(text=json.dumps(propose(request.context)), provider=self.name,
                          model=self.model)
