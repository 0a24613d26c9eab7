"""The CPU evaluator: resource checks, then the analytical cost model's prediction.

With a `space` (library_space.LibrarySpace) it judges only what argus.ops.matmul can run:
a configuration the library refuses is a `compile_error` with matmul's message and one
whose kernel the verifier rejects is `invalid`, as on the GPU, so the run's best is a
configuration the library accepts (`argus optimize --space library`, the default of the
command). Without one it ranks the cost model's whole knob table, kernels the library does
not have included. Either way its speeds are predictions (`source` "cost_model").
"""
from __future__ import annotations

from argus.agent.cost_model import predict
from argus.agent.evaluators.base import Outcome
from argus.agent.gemm_config import GemmConfig
from argus.agent.resources import check_resources, resource_summary
from argus.agent.task import GemmTask

MAX_FEEDBACK = 2000


def invalid_outcome(violations, source: str) -> Outcome:
    return Outcome(status="invalid", source=source,
                   violations=[v.to_json() for v in violations],
                   feedback="\n".join(str(v) for v in violations))


def space_outcome(space, config: GemmConfig, task: GemmTask, source: str) -> Outcome | None:
    """The failure of `config` in `space` (refused by the library, or its kernel rejected
    by the verifier), or None when the space holds it."""
    why, reasons = space.why_invalid(config, task)
    if why == "refused":
        return Outcome(status="compile_error", source=source, feedback=reasons[0][:MAX_FEEDBACK])
    if why == "unverified":
        return Outcome(status="invalid", source="verifier", details={"findings": reasons},
                       feedback=("the verifier rejects this configuration's kernel: "
                                 + "\n".join(reasons))[:MAX_FEEDBACK])
    return None


class CpuEvaluator:
    """Needs no GPU: validity from sm_90 limits (and the space), speed from
    cost_model.predict."""
    name = "cpu-cost-model"

    def __init__(self, space=None):
        self.space = space
        if space is not None:     # its own episodes: resume and lessons never mix the two
            self.name = f"cpu-cost-model-{getattr(space, 'name', 'space')}"

    def evaluate(self, config: GemmConfig, task: GemmTask) -> Outcome:
        violations = check_resources(config, task)
        if violations:
            return invalid_outcome(violations, "cost_model")
        if self.space is not None:
            failed = space_outcome(self.space, config, task, "cost_model")
            if failed is not None:
                return failed
        p = predict(config, task)
        return Outcome(status="ok", tflops=p["tflops"], time_ms=p["time_s"] * 1e3,
                       source="cost_model",
                       feedback=(f"predicted {p['tflops']:.0f} TFLOP/s, {p['predicted_bound']}-bound, "
                                 f"waves {p['waves']:.2f}, occupancy {p['occupancy']}, "
                                 f"latency hiding {p['efficiency']['latency_hiding']:.2f}"),
                       details={"prediction": p, "resources": resource_summary(config, task)})

    def close(self) -> None:
        verifier = getattr(self.space, "verifier", None)
        if verifier is not None:
            verifier.close()
