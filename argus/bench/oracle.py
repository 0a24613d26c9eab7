"""The correctness oracle: is the candidate at least as accurate as the peer?

One check: fresh seeded inputs; outputs poisoned (NaN for floats); the candidate runs
first (so no reference or peer output for these inputs exists yet for it to find), then a
second run on the same inputs with a second poison finds unwritten elements; then the
peer; then the float64 reference on the inputs upcast. The candidate passes when its error
against the reference is within `factor` times the peer's own error on the same inputs
plus a tiny floor, never by a loosened fixed tolerance. NaN and Inf never pass. Outputs
equal to an earlier check's outputs (for other inputs) are reported as replayed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch

from argus.bench.inputs import Sampler
from argus.bench.poison import fill_poison, unwritten_mask


@dataclass
class Tolerance:
    """How close to the peer's error the candidate must be.

    factor: the candidate's relative L2 error may be at most `factor` x the peer's.
    max_abs_factor: the same for the worst element (noisier, so looser by default).
    floor_eps: a floor of `floor_eps` x machine epsilon of the output dtype (relative),
      so a peer that happens to be exact does not demand exactness to the last bit.
    """

    factor: float = 2.0
    max_abs_factor: float = 4.0
    floor_eps: float = 0.1

    def __post_init__(self) -> None:
        if self.factor < 1.0 or self.max_abs_factor < 1.0 or self.floor_eps < 0:
            raise ValueError("Tolerance factors must be >= 1 and floor_eps >= 0; a factor "
                             "below 1 would reject the peer itself")


@dataclass
class ErrorMetrics:
    """Error of one output against the float64 reference."""

    rel_l2: float
    max_abs: float
    ref_max_abs: float
    nonfinite: int


@dataclass
class CheckReport:
    """The outcome of one correctness check (one seed, one distribution)."""

    seed: int
    distribution: str
    passed: bool
    reasons: list = field(default_factory=list)
    candidate: list = field(default_factory=list)
    peer: list = field(default_factory=list)
    unwritten: int = 0
    deterministic: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def machine_eps(dtype: torch.dtype) -> float:
    """Machine epsilon of a float dtype; 0 for integers (they must match exactly)."""
    return float(torch.finfo(dtype).eps) if dtype.is_floating_point else 0.0


def error_metrics(out: torch.Tensor, ref64: torch.Tensor) -> ErrorMetrics:
    """Relative L2 error, max-abs error and the count of non-finite elements of `out`."""
    if out.shape != ref64.shape:
        raise ValueError(f"output shape {tuple(out.shape)} differs from the reference's "
                         f"{tuple(ref64.shape)}")
    o = out.detach().to(torch.float64)
    nonfinite = int((~torch.isfinite(o)).sum().item())
    diff = torch.where(torch.isfinite(o), o - ref64, torch.full_like(o, float("inf")))
    ref_norm = float(torch.linalg.vector_norm(ref64).item())
    err_norm = float(torch.linalg.vector_norm(diff).item()) if diff.numel() else 0.0
    rel = err_norm / ref_norm if ref_norm > 0 else err_norm
    max_abs = float(diff.abs().max().item()) if diff.numel() else 0.0
    ref_max = float(ref64.abs().max().item()) if ref64.numel() else 0.0
    return ErrorMetrics(rel, max_abs, ref_max, nonfinite)


def judge(cand: ErrorMetrics, peer: ErrorMetrics, dtype: torch.dtype, tol: Tolerance) -> list:
    """Reasons the candidate's error is unacceptable next to the peer's (empty: fine)."""
    reasons = []
    if cand.nonfinite:
        reasons.append(f"{cand.nonfinite} non-finite elements (NaN/Inf never pass; NaN also "
                       "marks elements left unwritten)")
        return reasons
    floor = tol.floor_eps * machine_eps(dtype)
    limit = tol.factor * peer.rel_l2 + floor
    if not cand.rel_l2 <= limit:
        reasons.append(f"relative L2 error {cand.rel_l2:.3e} exceeds {tol.factor:g} x the "
                       f"peer's {peer.rel_l2:.3e} (+ floor {floor:.1e}) = {limit:.3e}")
    abs_limit = tol.max_abs_factor * peer.max_abs + floor * cand.ref_max_abs
    if not cand.max_abs <= abs_limit:
        reasons.append(f"max-abs error {cand.max_abs:.3e} exceeds {tol.max_abs_factor:g} x the "
                       f"peer's {peer.max_abs:.3e} (+ floor) = {abs_limit:.3e}")
    return reasons


def _sync(device) -> None:
    """Wait for the current stream only: work the candidate hid on another stream without
    joining it back is then still pending and its outputs read as poison."""
    if torch.device(device).type == "cuda":
        torch.cuda.current_stream(torch.device(device)).synchronize()


def _describe_output(out: torch.Tensor, ref64: torch.Tensor) -> list:
    notes = []
    if out.numel() > 1 and ref64.numel() > 1:
        o = out.detach()
        if o.dtype.is_floating_point and not torch.isfinite(o).all():
            return notes
        if bool((o == 0).all()) and bool((ref64 != 0).any()):
            notes.append("output is all zeros")
        elif bool((o == o.reshape(-1)[0]).all()) and not bool((ref64 == ref64.reshape(-1)[0]).all()):
            notes.append("output is a constant")
    return notes


class OutputHistory:
    """Outputs of earlier checks, to spot a candidate replaying them for new inputs."""

    def __init__(self, keep: int = 4):
        self.keep = keep
        self.entries: list = []  # (check label, tuple of outputs)

    def add(self, label: str, outputs: tuple) -> None:
        self.entries.append((label, tuple(o.detach().clone() for o in outputs)))
        del self.entries[:-self.keep]

    def replayed_from(self, outputs: tuple):
        for label, old in self.entries:
            if all(a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
                   for a, b in zip(outputs, old)):
                return label
        return None


def _refill(buffers: tuple, fresh: tuple) -> tuple:
    """Copy fresh values into existing buffers (same addresses), to defeat caches keyed
    on pointers."""
    for buf, new in zip(buffers, fresh):
        if buf.shape != new.shape or buf.dtype != new.dtype:
            raise ValueError("input buffers to refill do not match the problem's inputs")
        buf.copy_(new)
    return buffers


def check_once(problem, candidate, peer, *, seed: int, distribution: str = "normal",
               device="cpu", tol: Tolerance | None = None, history: OutputHistory | None = None,
               input_buffers: tuple | None = None, output_buffers: tuple | None = None,
               label: str | None = None) -> CheckReport:
    """Run one full check (see the module docstring). With `input_buffers`, the fresh
    values are written into those tensors in place (the re-check after timing)."""
    tol = tol or Tolerance()
    label = label or f"seed {seed} ({distribution})"
    inputs = problem.make_inputs(Sampler(seed, distribution, str(device)))
    if input_buffers is not None:
        inputs = _refill(input_buffers, inputs)
    saved_inputs = tuple(t.clone() for t in inputs)
    outs = output_buffers if output_buffers is not None else problem.make_outputs(inputs)
    reasons = []

    fill_poison(outs, 0)
    candidate(inputs, outs)
    _sync(device)
    cand = tuple(o.clone() for o in outs)
    fill_poison(outs, 1)
    candidate(inputs, outs)
    _sync(device)
    unwritten = sum(int(unwritten_mask(a, b).sum().item()) for a, b in zip(cand, outs))
    deterministic = all(torch.equal(a, b) for a, b in zip(cand, outs))
    if unwritten:
        total = sum(o.numel() for o in outs)
        reasons.append(f"{unwritten} of {total} output elements were never written "
                       "(they kept the poison in both runs)")
    if any(not torch.equal(a, b) for a, b in zip(saved_inputs, inputs)):
        reasons.append("the candidate modified its inputs")
        _refill(inputs, saved_inputs)

    peer_outs = problem.make_outputs(inputs)
    fill_poison(peer_outs, 0)
    peer(inputs, peer_outs)
    _sync(device)
    ref = problem.reference(tuple(t.to(torch.float64) for t in inputs))

    cand_metrics, peer_metrics = [], []
    for i, (c, c2, p, r) in enumerate(zip(cand, outs, peer_outs, ref)):
        cm, pm = error_metrics(c, r), error_metrics(p, r)
        cand_metrics.append(asdict(cm))
        peer_metrics.append(asdict(pm))
        if pm.nonfinite:
            reasons.append(f"output {i}: the peer produced {pm.nonfinite} non-finite elements; "
                           "the problem's inputs overflow its dtype (lower its magnitude)")
            continue
        for why in _describe_output(c, r) + judge(cm, pm, c.dtype, tol):
            reasons.append(f"output {i}: {why}")
        if not torch.equal(c, c2):  # the run over the second poison must be as good
            for why in judge(error_metrics(c2, r), pm, c2.dtype, tol):
                reasons.append(f"output {i}, second run (other poison): {why}")

    if history is not None:
        source = history.replayed_from(cand)
        if source is not None:
            reasons.insert(0, f"outputs are identical to those of check {source}, made for other "
                           "inputs (a cached result replayed)")
        history.add(label, cand)
        history.add(label + " peer", tuple(peer_outs))
    return CheckReport(seed, distribution, not reasons, reasons, cand_metrics, peer_metrics,
                       unwritten, deterministic)


def run_checks(problem, candidate, peer, *, base_seed: int = 0, count: int = 4, device="cpu",
               tol: Tolerance | None = None, history: OutputHistory | None = None) -> list:
    """`count` checks alternating the normal and wide distributions, each its own seed."""
    from argus.bench.inputs import check_seed, DISTRIBUTIONS
    if count < 2:
        raise ValueError("run at least 2 checks (one per input distribution)")
    history = history if history is not None else OutputHistory()
    return [check_once(problem, candidate, peer, seed=check_seed(base_seed, i),
                       distribution=DISTRIBUTIONS[i % len(DISTRIBUTIONS)], device=device,
                       tol=tol, history=history)
            for i in range(count)]
