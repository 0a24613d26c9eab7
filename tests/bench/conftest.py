"""Shared fixtures for the harness tests: small CPU problems and a fake device clock."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from argus.bench.problems import matmul  # noqa: E402


class FakeClock:
    """A device clock whose time moves only when a fake kernel says so."""

    def __init__(self):
        self.now_ms = 0.0
        self.syncs = 0

    def marker(self):
        return self.now_ms

    def elapsed_ms(self, start, end):
        return end - start

    def synchronize(self):
        self.syncs += 1

    def host_s(self):
        return self.now_ms / 1e3

    def advance(self, ms):
        self.now_ms += ms


class FakeFlusher:
    """Stands in for the L2 flush; costs (fake) time that must stay out of the samples."""

    def __init__(self, clock, cost_ms=5.0):
        self.clock, self.cost_ms, self.count = clock, cost_ms, 0
        self.l2_bytes, self.nbytes = 60 * 2 ** 20, 120 * 2 ** 20

    def __call__(self):
        self.count += 1
        self.clock.advance(self.cost_ms)


@pytest.fixture
def fp32_problem():
    return matmul(48, 40, 64, "float32")


@pytest.fixture
def bf16_problem():
    return matmul(64, 32, 128, "bfloat16")


@pytest.fixture
def clock():
    return FakeClock()


def honest(inputs, outputs):
    torch.matmul(inputs[0], inputs[1], out=outputs[0])
