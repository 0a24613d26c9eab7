"""The whole-kernel coder's pieces: edit blocks, stated invariants, the token budget."""
