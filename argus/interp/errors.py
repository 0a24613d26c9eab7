"""Errors the IR evaluator raises: bad inputs, failed assumptions, ops it cannot run."""


class InterpretError(Exception):
    """A kernel cannot be interpreted as given; the message says what to change."""
