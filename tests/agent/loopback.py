"""A scripted LLM server on 127.0.0.1 speaking the OpenAI chat-completions and the
Anthropic messages wire formats; it records every request body it receives.

Each scripted item is a reply text, an int HTTP status to answer with an error, or a
float: sleep that many seconds, then answer with the next item.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _openai_body(model: str, text: str, n: int) -> dict:
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000 + n,
            "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 100 + n, "completion_tokens": 10 + n,
                      "total_tokens": 110 + 2 * n}}


def _anthropic_body(model: str, text: str, n: int) -> dict:
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 200 + n, "output_tokens": 20 + n}}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that gave up (the timeout test) is expected, not an error."""


class LoopbackLLM:
    def __init__(self, script: list):
        self.script = list(script)
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(body)
                owner.paths.append(self.path)
                owner.headers.append(dict(self.headers))
                n = len(owner.requests)
                item = owner.script.pop(0) if owner.script else '{"stop": true}'
                if isinstance(item, float):
                    time.sleep(item)
                    item = owner.script.pop(0) if owner.script else '{"stop": true}'
                if isinstance(item, int):
                    payload, status = {"error": {"message": "scripted failure",
                                                 "type": "server_error"}}, item
                elif self.path.endswith("/chat/completions"):
                    payload, status = _openai_body(body.get("model", "m"), item, n), 200
                elif self.path.endswith("/messages"):
                    payload, status = _anthropic_body(body.get("model", "m"), item, n), 200
                else:
                    payload, status = {"error": {"message": f"no route {self.path}"}}, 404
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "LoopbackLLM":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def user_prompts(self) -> list[str]:
        """The user turn of every request, in either wire format."""
        out = []
        for body in self.requests:
            turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
            content = turns[-1]["content"] if turns else ""
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            out.append(content)
        return out
