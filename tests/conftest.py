"""Suite-wide settings. Hypothesis runs derandomized (the same examples on every run), so
CI's verdict depends on the code, not on the draw; ARGUS_HYPOTHESIS_EXPLORE=1 draws fresh
examples (run it locally now and then: it is how new counterexamples are found)."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile("explore" if os.environ.get("ARGUS_HYPOTHESIS_EXPLORE") else "ci")
