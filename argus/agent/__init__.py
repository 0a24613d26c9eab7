"""The agent: knowledge base, ICRL planner, LLM providers, evaluators, tools, MCP server.

Layers, each importable without the ones above it:
- `task`, `gemm_config`, `resources`, `cost_model`: what is optimised and how it is judged
  without a GPU (pure Python);
- `knowledge`: the curated technique files and their retrieval;
- `commands`, `kernel_source`: the `argus` command in a child process, and a DSL kernel
  file read from its syntax tree (never executed);
- `evaluators`: turn a configuration into an `Outcome` (CPU cost model, GPU hook);
- `providers`: the model that proposes the next configuration (embedded default, OpenAI-
  compatible endpoints, Anthropic), chosen by environment variables;
- `planner`, `prompt`, `reply`: the in-context RL loop;
- `tools`, `mcp_server`: the same operations as typed JSON tools, also over MCP.
The SDKs (openai, anthropic, mcp) are imported lazily, only by the providers and the server
that need them, so the embedded default runs with none installed.
"""
