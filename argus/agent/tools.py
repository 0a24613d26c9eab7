"""The agent's tools: typed JSON results, the same for the planner, the CLI and MCP.

Every tool returns a dict with "tool" and "ok". Tools that touch a user's kernel file
(check, compile, run_interpret, layout_show) run the `argus` command in a child process
with a timeout, so code under optimisation never runs inside the planner's process (and
cannot reach its timers, oracle or memory); their output is returned as text, marked
untrusted where it goes back into a prompt. The others (knowledge, cost model, optimize,
bench, profile) are Argus's own code; bench and profile run the candidate in a child too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from argus.agent import resources as R
from argus.agent.commands import check, compile_kernel, layout_show, run_interpret
from argus.agent.cost_model import predict
from argus.agent.dsl_guide import build_guide
from argus.agent.evaluators import EvaluatorUnavailable, GpuEvaluator
from argus.agent.gemm_config import ConfigError, knob_schema, parse_config
from argus.agent.knowledge import get_technique, search
from argus.agent.optimize import run_episode
from argus.agent.planner import Budget
from argus.agent.profile import profile as run_profile
from argus.agent.providers import ProviderError, load_config
from argus.agent.task import TaskError, parse_gemm_shape


def knowledge_search(query: str = "", op: str = "", shape: str = "", signals: list | None = None,
                     top_k: int = 5) -> dict[str, Any]:
    """Ranked techniques for a query, an op, a GEMM shape (its shape classes) and signals."""
    classes: list[str] = []
    if shape:
        try:
            classes = parse_gemm_shape(shape).shape_class()
        except TaskError as err:
            return {"tool": "knowledge_search", "ok": False, "error": str(err)}
    hits = search(query, op=op or None, shape_classes=classes, signals=signals or [],
                  top_k=max(1, min(int(top_k), 50)))
    return {"tool": "knowledge_search", "ok": True, "shape_classes": classes,
            "results": [{"score": round(score, 3), **t.to_json(brief=True)} for score, t in hits]}


def knowledge_get(technique_id: str) -> dict[str, Any]:
    """One technique in full (sources, preconditions, pitfalls, invariants, moves)."""
    t = get_technique(technique_id)
    if t is None:
        return {"tool": "knowledge_get", "ok": False,
                "error": f"no technique {technique_id!r}; search with knowledge_search"}
    return {"tool": "knowledge_get", "ok": True, "technique": t.to_json()}


def cost_model(shape: str, config: dict | None = None, dtype: str = "bfloat16") -> dict[str, Any]:
    """Static cost model (no GPU): resources, violations with counterexamples, prediction."""
    try:
        task = parse_gemm_shape(shape, dtype)
        cfg = parse_config(config or {})
    except (TaskError, ConfigError) as err:
        return {"tool": "cost_model", "ok": False, "error": str(err),
                "knobs": knob_schema() if isinstance(err, ConfigError) else None}
    violations = R.check_resources(cfg, task)
    out = {"tool": "cost_model", "ok": not violations, "task": task.describe(),
           "config": cfg.to_json(), "resources": R.resource_summary(cfg, task),
           "violations": [v.to_json() for v in violations]}
    if not violations:
        out["prediction"] = predict(cfg, task)
    return out


def optimize(shape: str, budget: int = 24, provider: str = "embedded", model: str = "",
             base_url: str = "", evaluator: str = "cpu", out_dir: str = "") -> dict[str, Any]:
    """Run the planner on a GEMM shape; the summary (and files when out_dir is given)."""
    try:
        task = parse_gemm_shape(shape)
        config = load_config({"provider": provider, "model": model, "base_url": base_url})
        run = run_episode(task, config, evaluator=evaluator,
                          budget=Budget(evaluations=max(1, min(int(budget), 500))),
                          out_dir=out_dir or None, db=False)
    except (TaskError, ProviderError, ValueError, RuntimeError) as err:
        return {"tool": "optimize", "ok": False, "error": f"{type(err).__name__}: {err}"}
    return {"tool": "optimize", "ok": run["summary"]["best_tflops"] is not None,
            "summary": run["summary"], "paths": run["paths"]}


def bench(shape: str, config: dict | None = None) -> dict[str, Any]:
    """Measure one GEMM configuration on the GPU through the isolated harness."""
    try:
        task = parse_gemm_shape(shape)
        cfg = parse_config(config or {})
        outcome = GpuEvaluator().evaluate(cfg, task)
    except (TaskError, ConfigError) as err:
        return {"tool": "bench", "ok": False, "available": True, "error": str(err)}
    except EvaluatorUnavailable as err:
        return {"tool": "bench", "ok": False, "available": False, "error": str(err)}
    return {"tool": "bench", "ok": outcome.ok, "available": True, "outcome": outcome.to_json()}


def profile(shape: str, config: dict | None = None, kernel: str = "",
            metrics: list | None = None) -> dict[str, Any]:
    """ncu metrics of one candidate when ncu and a GPU exist, else a timing breakdown on the
    GPU, else {"available": false, "kind": "unavailable"} (argus/agent/profile.py)."""
    try:
        parse_gemm_shape(shape)
        if config:
            parse_config(config)
    except (TaskError, ConfigError) as err:
        return {"tool": "profile", "ok": False, "available": True, "error": str(err)}
    if kernel and not Path(kernel).is_file():
        return {"tool": "profile", "ok": False, "available": True,
                "error": f"kernel file {kernel} does not exist"}
    return run_profile(shape, config, kernel, [str(m) for m in metrics] if metrics else None)


def dsl_guide(max_chars: int = 16000) -> dict[str, Any]:
    """The DSL reference and verified examples, generated from the code, sized for a prompt."""
    guide = build_guide(max(2000, min(int(max_chars), 100000)))
    return {"tool": "dsl_guide", "ok": True, "chars": len(guide), "guide": guide}


TOOLS = {"check": check, "compile": compile_kernel, "run_interpret": run_interpret,
         "layout_show": layout_show, "knowledge_search": knowledge_search,
         "knowledge_get": knowledge_get, "cost_model": cost_model, "optimize": optimize,
         "bench": bench, "profile": profile, "dsl_guide": dsl_guide}
