"""The frontend: kernel source -> IR, with DSLError diagnostics at the user's line."""

from .errors import DSLError
from .parse import parse_file, parse_kernel, parse_kernel_function, parse_source

__all__ = ["DSLError", "parse_file", "parse_kernel", "parse_kernel_function", "parse_source"]
