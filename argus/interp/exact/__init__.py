"""Fragment-exact mode of the interpreter: every fragment held per (thread, register)
through its thread-value layout, shared memory as bytes through the swizzles (the
machine's exact regions), TMA writing the swizzled image and wgmma reading through
descriptors. `rules.EXACT_RULES` overrides the value-mode rules of the ops that touch
registers; everything else (barriers, structure, TMA issue) is shared with value mode."""
