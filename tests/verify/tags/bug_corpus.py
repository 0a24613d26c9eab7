"""One folder of a bug corpus (examples/bugs/<folder>/), for the tests that check it: each
file's docstring names the check and the line of the error it must give
("Expected: <check> at line <n>."), and the tag pass's findings of each are worked out once."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from argus.frontend.parse import parse_kernel
from argus.verify.tags import check

ROOT = Path(__file__).resolve().parents[3]


class Corpus:
    def __init__(self, folder: str, kernels: dict[str, str]):
        """`kernels`: bug file name -> the kernel of it that is checked."""
        self.folder = ROOT / "examples" / "bugs" / folder
        self.kernels = kernels
        self.names = sorted(p.stem for p in self.folder.glob("*.py"))
        self.analysed = lru_cache(maxsize=None)(self._analysed)

    def expected(self, name: str) -> tuple[str, int]:
        """(check, line) the file's docstring names."""
        m = re.search(r"Expected: (\S+) at line (\d+)\.", (self.folder / f"{name}.py").read_text())
        assert m, f"{name}.py: the docstring must say 'Expected: <check> at line <n>.'"
        return m.group(1), int(m.group(2))

    def _analysed(self, name: str):
        kernel = parse_kernel(self.folder / f"{name}.py", self.kernels[name])
        return kernel, check(kernel)

    def finding(self, name: str):
        """The finding of the check at the line the docstring names (asserted to exist)."""
        want, line = self.expected(name)
        _, findings = self.analysed(name)
        hits = [f for f in findings if f.check == want and f.loc.line == line]
        assert hits, f"{name}: no {want} at line {line}; got " + "; ".join(
            f"{f.check}@{f.loc.line}" for f in findings)
        return hits[0]
