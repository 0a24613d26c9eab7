"""`argus run` with a file's own `inputs(rng, symbols)`: its arrays replace the random ones
(so a kernel with relations between inputs, like routing counts that add up, can be run),
and a bad one is a usage error naming the problem."""

from argus.cli.main import main

# The output is X scaled by the first entry of F, which must be 3: random int32 values
# would not be, so this passes only when inputs() supplies F.
SCALED = '''\
import numpy as np

from argus.lang import Tensor, fp32, int32, kernel, load, store, tile


@kernel(grid=(1,), block=128)
def scaled(X: Tensor[64, 64, fp32], F: Tensor[4, int32], Y: Tensor[64, 64, fp32]):
    x = load(tile(X, (64, 64), (0, 0)), "blocked")
    store(tile(Y, (64, 64), (0, 0)), x * 3.0)


def reference(X, F):
    return np.asarray(X) * float(F[0])


def inputs(rng, symbols):
    return {INPUTS}
'''


def _file(tmp_path, inputs):
    path = tmp_path / "scaled.py"
    path.write_text(SCALED.replace("{INPUTS}", inputs))
    return f"{path}::scaled"


def test_inputs_hook_supplies_the_constrained_input(tmp_path, capsys):
    assert main(["run", _file(tmp_path, '{"F": np.full(4, 3, np.int32)}'), "--interpret"]) == 0
    assert capsys.readouterr().out.strip().endswith("PASS")


def test_without_the_hook_the_random_input_fails(tmp_path, capsys):
    assert main(["run", _file(tmp_path, "{}"), "--interpret"]) == 1


def test_hook_naming_an_unknown_input_is_a_usage_error(tmp_path, capsys):
    assert main(["run", _file(tmp_path, '{"G": np.zeros(4)}'), "--interpret"]) == 2
    err = capsys.readouterr().err
    assert "inputs() made 'G', which is not an input tensor" in err and "Traceback" not in err


def test_hook_with_a_wrong_shape_is_a_usage_error(tmp_path, capsys):
    assert main(["run", _file(tmp_path, '{"F": np.zeros(5, np.int32)}'), "--interpret"]) == 2
    assert "inputs() made F of shape (5,); the kernel needs (4,)" in capsys.readouterr().err


def test_hook_that_raises_is_a_usage_error(tmp_path, capsys):
    assert main(["run", _file(tmp_path, 'symbols["NOPE"]'), "--interpret"]) == 2
    err = capsys.readouterr().err
    # the line of the file's inputs() that raised, from the isolated child's traceback
    assert "scaled.py:17: inputs(rng, symbols) failed: KeyError: 'NOPE'" in err
    assert "Traceback" not in err


UNWRITTEN_INT = '''\
import numpy as np

from argus.lang import Tensor, fp32, int32, kernel, load, store, tile


@kernel(grid=(1,), block=128)
def half(X: Tensor[64, fp32], Y: Tensor[64, fp32], Z: Tensor[64, int32]):
    store(tile(Y, (64,), (0,)), load(tile(X, (64,), (0,)), "blocked"))


def reference(X):
    return np.asarray(X), np.zeros(64, np.int32)
'''


def test_an_int32_output_never_written_fails(tmp_path, capsys, recwarn):
    path = tmp_path / "half.py"
    path.write_text(UNWRITTEN_INT)
    assert main(["run", f"{path}::half", "--interpret"]) == 1
    out = capsys.readouterr().out
    assert "Z (int32)" in out and "64 of 64 elements off" in out
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
