"""A new elementwise op is one definition in the op table: defined with
argus.ir.ops.math.define_unary (in a fresh process, before the stages import), it is parsed
from a kernel, interpreted in both modes, verified with no finding and generated (and
built, where a compiler is at hand), with no other file touched."""

import json
import subprocess
import sys
import textwrap

TOY = textwrap.dedent('''
    import json, sys
    import numpy as np
    from argus.ir.ops.math import define_unary

    define_unary("toy", lambda x: np.asarray(x, np.float32) * np.float32(3) + np.float32(1),
                 "(({x}) * 3.0f + 1.0f)", doc="3x + 1, a test's op")

    from argus.codegen import generate
    from argus.frontend.parse import parse_source
    from argus.interp.evaluator import interpret
    from argus.verify import verify

    SOURCE = """
    from argus.lang import Tensor, fp32, kernel, load, store, tile, toy, tag, tag_assert, coord


    @kernel(grid=(1,), block=128)
    def k(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
        x = toy(load(tile(X, (64, 64), (0, 0)), "blocked"))
        dst = tile(Y, (64, 64), (0, 0))
        tag_assert(tag(x).row == coord(dst)[0] and tag(x).col == coord(dst)[1])
        store(dst, x)
    """
    kernel = parse_source(SOURCE, "toy.py")["k"]
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    out = {}
    for mode in ("value", "exact"):
        y = np.full((64, 64), np.nan, np.float32)
        result = interpret(kernel, {"X": x, "Y": y}, mode=mode)
        out[mode] = bool(np.array_equal(result.outputs["Y"], x * np.float32(3) + np.float32(1)))
    findings = verify(kernel)
    out["findings"] = [(f.check, f.severity) for f in findings]
    source = generate(kernel).source
    out["generated"] = "* 3.0f + 1.0f" in source
    try:
        from argus.runtime import BuildOptions, build_kernel
        from argus.runtime.toolchain import find_tool, nvrtc_identity
        if find_tool("nvcc") or nvrtc_identity():
            out["built"] = build_kernel(source, BuildOptions()).cubin[:4] == b"\\x7fELF"
    except Exception as err:                     # reported, the test asserts on it
        out["built"] = repr(err)
    print(json.dumps(out))
''')


def test_a_toy_op_defined_once_reaches_every_stage(tmp_path):
    run = subprocess.run([sys.executable, "-c", TOY], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path, env={"ARGUS_CACHE_DIR": str(tmp_path),
                                                         "PATH": "/usr/bin:/bin:/usr/local/bin",
                                                         **_python_env()})
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["value"] and out["exact"]
    assert out["findings"] == []
    assert out["generated"]
    assert out.get("built", True) is True


def test_define_unary_refuses_a_name_that_exists_or_an_unused_operand():
    import pytest

    from argus.ir.ops.math import define_unary
    with pytest.raises(ValueError, match="exists"):
        define_unary("exp2", lambda x: x, "({x})")
    with pytest.raises(ValueError, match="operand"):
        define_unary("toy_bad", lambda x: x, "1.0f")


def _python_env():
    import os
    keep = ("PYTHONPATH", "HOME", "VIRTUAL_ENV", "PYENV_VERSION", "LD_LIBRARY_PATH", "CUDA_HOME",
            "CUDA_PATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    return env
