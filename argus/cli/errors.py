"""The one error type the command turns into a one-line message and exit status 2."""


class UsageError(Exception):
    """The user asked for something that cannot be done; the message says why and how to fix it."""
