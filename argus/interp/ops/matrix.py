"""ldmatrix / stmatrix: no rules yet (listed in KNOWN_MISSING)."""

RULES: dict = {}
