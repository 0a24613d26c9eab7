import inspect

import argus.lang as lang
from argus.agent.dsl_guide import build_guide, verified_examples


def test_every_surface_function_with_its_real_signature():
    guide = build_guide()
    for name, fn in lang.surface_functions().items():
        signature = f"{name}{inspect.signature(fn.__wrapped__)}"
        assert f"- {signature}:" in guide, signature


def test_size_bound_and_verified_examples():
    small = build_guide(max_chars=6000)
    assert len(small) <= 6000
    guide = build_guide()
    names = [p.name for p, _ in verified_examples()]
    assert "gemm.py" in names and "copy.py" in names
    assert all(f"examples/{n}" in guide for n in names)
    assert "```python\n" in guide              # the shortest example in full
