"""Argus: a tile DSL for NVIDIA Hopper whose compiler verifies data-flow invariants."""

__version__ = "0.1.0"
