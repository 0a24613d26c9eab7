"""A stand-in for the verifier of library specialisations, instant, for planner tests.

It rejects what the real verifier rejects in the library GEMM's space (a one-stage ring:
`protocol.stage-reuse`, shown by tests/agent/test_library_space.py with the real verifier)
and counts what it was asked."""
from argus.agent.library_verifier import LibraryVerifier


class FakeVerifier(LibraryVerifier):
    def __init__(self):
        super().__init__(workers=0)
        self.asked = []

    def errors(self, spec):
        self.asked.append(spec)
        if dict(spec[2])["S"] < 2:
            return [f"argus/kernels/{spec[0]}.py: error: this releases empty[0] while the "
                    f"wgmma reading a_s[0] may still be in flight [protocol.stage-reuse]"]
        return []

    def known(self, spec):
        return True
