"""A stand-in GPU for the planner tests: a benchmark callable whose times are the cost
model's, moved per kernel by a deterministic +-15% and a bias the model does not know
(here: BN=128 tiles 15% faster), so that measured rewards, not the prior, must steer."""
import hashlib

from argus.agent.cost_model import predict


def landscape(seed: int = 1, spread: float = 0.15, calls: list | None = None):
    def benchmark(config, task, reps=None):
        if calls is not None:
            calls.append(config)
        ms = predict(config, task)["time_s"] * 1e3
        h = int(hashlib.sha256(f"{seed}{config.key()}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        ms *= (1 + spread * (2 * h - 1)) * (0.85 if config.BN == 128 else 1.0)
        return {"status": "ok", "time_ms": ms, "peer_time_ms": ms * 0.95, "reasons": []}
    return benchmark


def broken(knob: str, value, status: str = "incorrect", seed: int = 1, calls=None):
    """The landscape, except that every configuration with `knob` = `value` fails with
    `status` (a variant that is wrong on this GPU, e.g. epilogue="smem_tma")."""
    ok = landscape(seed, calls=calls)

    def benchmark(config, task, reps=None):
        if getattr(config, knob) == value:
            if calls is not None:
                calls.append(config)
            return {"status": status, "reasons": ["stand-in: this variant is wrong here"]}
        return ok(config, task, reps)
    return benchmark
