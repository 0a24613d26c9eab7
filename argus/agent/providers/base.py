"""The provider interface: a chat request in, the reply text and its token usage out.

`ChatRequest.context` carries the planner's structured state (task, trajectory, retrieved
knowledge) next to the rendered messages: remote models read the messages, the embedded
planner reads the context. Both answer in the same reply format (reply.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class ProviderError(RuntimeError):
    """The provider could not answer (network, authentication, timeout, bad response);
    the message names the provider, the endpoint and what to check."""


@dataclass(frozen=True)
class Message:
    role: str                # "system" | "user" | "assistant"
    content: str


@dataclass
class ChatRequest:
    messages: list[Message]
    context: Any = None
    max_tokens: int = 1024
    temperature: float = 0.0

    @property
    def system(self) -> str:
        return "\n\n".join(m.content for m in self.messages if m.role == "system")

    def turns(self) -> list[Message]:
        return [m for m in self.messages if m.role != "system"]


@dataclass
class Completion:
    text: str
    provider: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict)


class Provider(Protocol):
    name: str
    model: str

    def complete(self, request: ChatRequest) -> Completion: ...
