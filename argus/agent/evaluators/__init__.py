"""Evaluators: a configuration in, an `Outcome` out (validity, speed, feedback)."""
from argus.agent.evaluators.base import Evaluator, EvaluatorUnavailable, Outcome
from argus.agent.evaluators.cpu import CpuEvaluator
from argus.agent.evaluators.gpu import GpuEvaluator, cuda_available

__all__ = ["Evaluator", "EvaluatorUnavailable", "Outcome", "CpuEvaluator", "GpuEvaluator",
           "cuda_available"]
