"""The CPU evaluator: resource checks, then the analytical cost model's prediction."""
from __future__ import annotations

from argus.agent.cost_model import predict
from argus.agent.evaluators.base import Outcome
from argus.agent.gemm_config import GemmConfig
from argus.agent.resources import check_resources, resource_summary
from argus.agent.task import GemmTask


def invalid_outcome(violations, source: str) -> Outcome:
    return Outcome(status="invalid", source=source,
                   violations=[v.to_json() for v in violations],
                   feedback="\n".join(str(v) for v in violations))


class CpuEvaluator:
    """Needs no GPU: validity from sm_90 limits, speed from cost_model.predict."""
    name = "cpu-cost-model"

    def evaluate(self, config: GemmConfig, task: GemmTask) -> Outcome:
        violations = check_resources(config, task)
        if violations:
            return invalid_outcome(violations, "cost_model")
        p = predict(config, task)
        return Outcome(status="ok", tflops=p["tflops"], time_ms=p["time_s"] * 1e3,
                       source="cost_model",
                       feedback=(f"predicted {p['tflops']:.0f} TFLOP/s, {p['predicted_bound']}-bound, "
                                 f"waves {p['waves']:.2f}, occupancy {p['occupancy']}, "
                                 f"latency hiding {p['efficiency']['latency_hiding']:.2f}"),
                       details={"prediction": p, "resources": resource_summary(config, task)})
