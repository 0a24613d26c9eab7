"""The verifier's limits that several of its modules obey, here so that none imports another
for them: how long one solver query may take (smt.py's bit-vector queries and integers.py's
linear-integer translation), and how long a loop the tag pass enumerates (walker.py's exact
products, assumptions.py's tag assumptions inside loops)."""

TIMEOUT_MS = 5000         # one z3 check; past it the answer is "unknown" (not verified)
SMALL_TRIP = 128          # constant loops this short multiply exactly (no product atom), and
                          # tag assumptions inside them are enumerated: an MoE layer's 64 or
                          # 128 experts (at 16, those layers' GEMMs were never verified)
