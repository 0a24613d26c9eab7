"""The import graph of argus/: no loops, and the walls of ../shared/STYLE.md hold.

A loop is a missing layer: the piece both sides need belongs in a module below both. The
graph is read from the source (ast, nothing is imported). `from a.b.c import x` is an
edge to a.b.c, to a.b.c.x when that is a module, and to every package on the way (a.b's
__init__ runs first) except the importer's own packages. Imports under
`if TYPE_CHECKING:` are not edges.

Two graphs: the module-level imports (what runs at import time), and those plus the
imports written inside functions (a loop hidden in a function is still a loop; it only
fails later, at the first call). `python tests/test_import_layers.py [-a]` prints the
loops of either.
"""

from __future__ import annotations

import ast
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "argus"

# Loops that exist today and are being removed; nothing may join them and no other may
# appear. Each entry is the set of modules of one loop.
ALLOWED_MODULE_LEVEL_LOOPS: list[frozenset[str]] = []   # none (lang <-> frontend is gone)
# Loops closed only by an import inside a function, in packages other engineers are
# reorganising now; each is to be broken there (by a lower module both sides import).
ALLOWED_HIDDEN_LOOPS: list[frozenset[str]] = ALLOWED_MODULE_LEVEL_LOOPS + [
    frozenset({"argus.verify.tags.memory", "argus.verify.tags.report",
               "argus.verify.tags.routing", "argus.verify.tags.segments"}),
    # the softmax pack's dispatch (softmax.math_op) reaches its rules for the rescale and
    # the folded scale in a function; they use its helpers
    frozenset({"argus.verify.tags.mask", "argus.verify.tags.rescale",
               "argus.verify.tags.scaled", "argus.verify.tags.softmax"}),
    frozenset({"argus.verify.tags.bands", "argus.verify.tags.operands"}),
]


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
            or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module, in_functions: bool):
    """The import statements that run at import time (and, with in_functions, all others
    except those under TYPE_CHECKING)."""
    def walk(body):
        for stmt in body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                yield stmt
            elif isinstance(stmt, ast.If):
                if not _is_type_checking(stmt.test):
                    yield from walk(stmt.body)
                    yield from walk(stmt.orelse)
            elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                yield from walk(stmt.body)
                for h in stmt.handlers:
                    yield from walk(h.body)
                yield from walk(stmt.orelse)
                yield from walk(stmt.finalbody)
            elif isinstance(stmt, (ast.With, ast.For, ast.While)):
                yield from walk(stmt.body)
            elif in_functions and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                    ast.ClassDef)):
                yield from walk(stmt.body)
    yield from walk(tree.body)


def _targets(name: str, package: bool, stmt, modules) -> set[str]:
    """The argus modules an import statement in module `name` runs."""
    if isinstance(stmt, ast.Import):
        named = [a.name for a in stmt.names]
    else:
        if stmt.level:
            base = name.split(".") if package else name.split(".")[:-1]
            base = base[:len(base) - (stmt.level - 1)]
            origin = ".".join(base + ([stmt.module] if stmt.module else []))
        else:
            origin = stmt.module or ""
        named = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin
                 for a in stmt.names]
    own = set()
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        own.add(".".join(parts[:i]))
    out = set()
    for target in named:
        if not target.startswith("argus"):
            continue
        pieces = target.split(".")
        for i in range(1, len(pieces) + 1):
            prefix = ".".join(pieces[:i])
            if prefix in modules and prefix not in own:
                out.add(prefix)
    return out


@lru_cache(maxsize=2)
def import_graph(in_functions: bool = False) -> dict[str, frozenset[str]]:
    modules = _modules()
    graph = {}
    for name, (path, package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges = set()
        for stmt in _imports(tree, in_functions):
            edges |= _targets(name, package, stmt, modules)
        graph[name] = frozenset(edges - {name})
    return graph


def loops(graph: dict[str, frozenset[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(frozenset(component))
    return out


def _unexpected(found, allowed) -> list[list[str]]:
    return [sorted(loop) for loop in found if not any(loop <= ok for ok in allowed)]


def test_no_import_loop_at_module_level():
    assert _unexpected(loops(import_graph()), ALLOWED_MODULE_LEVEL_LOOPS) == []


def test_no_import_loop_hidden_in_a_function():
    assert _unexpected(loops(import_graph(True)), ALLOWED_HIDDEN_LOOPS) == []


def _reaches(package: str, in_functions: bool = True) -> dict[str, set[str]]:
    """Module of `package` -> the argus modules it imports directly."""
    graph = import_graph(in_functions)
    return {m: set(graph[m]) for m in graph if m == package or m.startswith(package + ".")}


def _crossings(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{m} -> {t}" for m, targets in _reaches(package).items() for t in targets
                  if any(t == f or t.startswith(f + ".") for f in forbidden))


def test_the_verifier_imports_neither_the_code_generator_nor_the_cli():
    # what is proven must not depend on how it is emitted; tooling stays outside
    assert _crossings("argus.verify", ("argus.codegen", "argus.cli")) == []


def test_the_interpreter_does_not_import_the_code_generator():
    # a twin must not share the thing it checks
    assert _crossings("argus.interp", ("argus.codegen",)) == []


def test_the_layout_algebra_imports_nothing_of_argus_outside_itself():
    outside = sorted(f"{m} -> {t}" for m, targets in _reaches("argus.layout").items()
                     for t in targets if t != "argus" and not t.startswith("argus.layout"))
    assert outside == []


def test_the_product_never_imports_the_tooling():
    # tools/ (the mutation tester) imports argus.cli and argus.verify; the other way round
    # would put the tooling back inside the product
    found = []
    for name, (path, _) in _modules().items():
        for stmt in _imports(ast.parse(path.read_text(encoding="utf-8")), True):
            named = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else \
                [stmt.module or ""] if not stmt.level else []
            found += [f"{name} -> {n}" for n in named if n == "tools" or n.startswith("tools.")]
    assert found == []


def test_the_graph_sees_real_edges():
    # a guard on the guard: a reader that found no edges would pass every test above
    graph = import_graph()
    assert "argus.ir.nodes" in graph["argus.verify.driver"] or any(
        t.startswith("argus.ir") for t in graph["argus.verify.driver"])
    assert "argus.agent.coder" in graph["argus.agent.prompt"]


if __name__ == "__main__":
    for loop in loops(import_graph("-a" in sys.argv)):
        print(len(loop), " ".join(sorted(loop)))
