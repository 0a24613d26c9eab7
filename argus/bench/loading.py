"""Loads a callable named 'module:attr' or 'path/to/file.py:attr'."""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os


def load_callable(ref: str):
    """The object named by `ref` ('pkg.mod:name' or 'file.py:name')."""
    if not isinstance(ref, str) or ":" not in ref:
        raise ValueError(f"a callable reference looks like 'pkg.module:name' or "
                         f"'path/file.py:name', got {ref!r}")
    where, _, attr = ref.rpartition(":")
    if where.endswith(".py"):
        path = os.path.abspath(where)
        if not os.path.exists(path):
            raise FileNotFoundError(f"candidate file {path} does not exist")
        name = "argus_candidate_" + hashlib.sha1(path.encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise AttributeError(f"{where} has no attribute {attr!r} (from {ref!r})") from None
    if not callable(obj):
        raise TypeError(f"{ref} is not callable")
    return obj
