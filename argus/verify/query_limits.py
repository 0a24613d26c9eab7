"""How long one solver query may take: the one number that smt.py (bit-vector queries) and
integers.py (their linear-integer translation) both obey, here so that neither imports the
other for it."""

TIMEOUT_MS = 5000         # one z3 check; past it the answer is "unknown" (not verified)
