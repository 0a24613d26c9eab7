"""An in-process provider that replays scripted replies and keeps every request."""
from argus.agent.providers.base import Completion


class ScriptedProvider:
    name, model = "scripted", "scripted"

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests = []

    def complete(self, request):
        self.requests.append(request)
        text = self.replies.pop(0) if self.replies else '{"stop": true}'
        return Completion(text=text, provider=self.name, model=self.model,
                          input_tokens=10, output_tokens=5)

    def prompt(self, i):
        return self.requests[i].messages[-1].content
