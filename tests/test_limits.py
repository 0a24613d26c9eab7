"""The Hopper limits live in argus/limits.py alone: no other module of argus/ writes one of
them as a literal, and the frontend keeps the compiler's named barriers from the user."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from argus import limits
from argus.frontend import DSLError, parse_source

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "argus"

# Literals that are a Hopper limit wherever they appear in code: 227 KB, the register file,
# the per-thread register cap, the SM count.
LIMIT_NUMBERS = {232448: "SMEM_PER_BLOCK", 233472: "SMEM_PER_SM", 65536: "REGISTERS_PER_SM",
                 255: "MAX_REGISTERS_PER_THREAD", 132: "SM_COUNT"}
# `N * 1024` spellings of the same.
KIB_PRODUCTS = {227: "SMEM_PER_BLOCK", 228: "SMEM_PER_SM", 64: "REGISTERS_PER_SM"}
# Limits written inside a message (a string that is not a docstring).
LIMIT_TEXT = re.compile(r"\b227 KB\b|\b232448\b|\b65536\b|\b24\.\.256\b|\b0\.\.15\b|\b12\.\.15\b")

# path (relative to argus/), value -> why that literal is not a restatement of a limit
ALLOWED = {
    ("kernels/gemm.py", 132): "a DSL source: its module constants must be literals (the "
                              "frontend and the agent read them without executing the file)",
    ("kernels/gemm_splitk.py", 132): "a DSL source, as gemm.py",
    ("kernels/moe_gate_up.py", 132): "a DSL source, as gemm.py",
    ("kernels/moe_down.py", 132): "a DSL source, as gemm.py",
    ("kernels/attention.py", 132): "a DSL source, as gemm.py",
    ("layout/draw.py", 255): "an 8-bit colour channel",
    ("agent/evaluators/gpu_session.py", 65536): "a pipe read size",
    ("bench/isolation.py", 65536): "a pipe read size",
    ("bench/gemm_bench.py", 255): "a GEMM test shape (M = 255)",
}


def _docstring_lines(tree: ast.Module) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def restatements(path: Path) -> list[tuple[int, object, str]]:
    """(line, value, the limit's name) for every limit written as a literal in the code of
    `path`: numbers and message text, not comments and docstrings."""
    text = path.read_text(encoding="utf-8")
    docstrings = _docstring_lines(ast.parse(text))
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                tokenize.INDENT, tokenize.DEDENT)]
    found = []
    for i, tok in enumerate(tokens):
        line = tok.start[0]
        if tok.type == tokenize.NUMBER:
            try:
                value = int(tok.string.replace("_", ""), 0)
            except ValueError:
                continue
            if value in LIMIT_NUMBERS:
                found.append((line, value, LIMIT_NUMBERS[value]))
            nxt = tokens[i + 1:i + 3]
            if value in KIB_PRODUCTS and len(nxt) == 2 and nxt[0].string == "*" \
                    and nxt[1].string == "1024":
                found.append((line, f"{value} * 1024", KIB_PRODUCTS[value]))
            if value == limits.SETMAXNREG_MIN and any(
                    t.type == tokenize.NUMBER and t.string == "256" and t.start[0] == line
                    for t in tokens[i + 1:i + 8]):
                found.append((line, "24 .. 256", "SETMAXNREG_MIN/MAX"))
        elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            if line in docstrings:
                continue
            for match in LIMIT_TEXT.finditer(tok.string):
                found.append((line, match.group(0), "a limit in a message"))
    return found


def test_the_limits_module_imports_nothing():
    tree = ast.parse((PACKAGE / "limits.py").read_text(encoding="utf-8"))
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))] == []


def test_no_other_module_restates_a_hardware_limit():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "limits.py":
            continue
        for line, value, name in restatements(path):
            if (rel, value) not in ALLOWED:
                found.append(f"argus/{rel}:{line}: {value} is argus.limits.{name}")
    assert found == [], "import these from argus.limits:\n" + "\n".join(found)


def test_the_guard_catches_a_restatement(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""Up to 227 KB (a docstring may say so)."""\n'
                      "SMEM = 227 * 1024  # 227 KB\n"
                      "def f(regs):\n"
                      "    if not 24 <= regs <= 256:\n"
                      "        raise ValueError(f'setmaxnreg takes 24..256, got {regs}')\n"
                      "    return min(255, regs), 132\n")
    assert [(line, value) for line, value, _ in restatements(sample)] == [
        (2, "227 * 1024"), (4, "24 .. 256"), (5, "24..256"), (6, 255), (6, 132)]


def test_the_allow_list_has_no_stale_entry():
    for rel, value in ALLOWED:
        assert any(v == value for _, v, _ in restatements(PACKAGE / rel)), (rel, value)


def test_the_layouts_copy_of_the_tma_box_limit_agrees():
    # the layout algebra imports nothing of Argus, so it keeps its own copy
    from argus.layout.hopper.tma import MAX_BOX_DIM

    assert MAX_BOX_DIM == limits.TMA_BOX_MAX_DIM


def test_the_compiler_barriers_are_the_exchanges():
    from argus.codegen.lower.exchange import EXCHANGE_BARRIER

    assert EXCHANGE_BARRIER == limits.COMPILER_BARRIERS.start
    assert limits.COMPILER_BARRIERS.stop == limits.NAMED_BARRIERS
    assert len(limits.COMPILER_BARRIERS) * limits.WARPGROUP_THREADS == 512   # 4 warpgroups
    assert limits.SMEM_PER_BLOCK == 232448


KERNEL = '''from argus.lang import *

@kernel(grid=(1,), block=256)
def k(A: Tensor["M", "K", bf16]):
    named_barrier({id}, 256)
'''


@pytest.mark.parametrize("bid", [12, 15])
def test_a_user_named_barrier_in_the_compilers_ids_is_refused_at_its_line(bid):
    with pytest.raises(DSLError) as info:
        parse_source(KERNEL.format(id=bid), "kern.py")
    err = info.value
    assert (err.loc.file, err.loc.line) == ("kern.py", 5)
    assert "named barrier ids 12..15 are the compiler's" in err.message
    assert f"got {bid}" in err.message
    assert str(err).startswith("kern.py:5:")


def test_named_barrier_ids_below_the_compilers_and_past_the_hardware():
    parse_source(KERNEL.format(id=11), "kern.py")
    with pytest.raises(DSLError, match=r"named barriers are 0\.\.15, got 16"):
        parse_source(KERNEL.format(id=16), "kern.py")
