"""Size limits of what Argus takes as input: kernel files, expressions, shapes to run.

Not the hardware (argus/limits.py states those): bounds under which every input gets a
diagnostic or a verdict within seconds instead of a hang, a MemoryError or a
RecursionError. Each is checked before anything expensive, where the input is read: the
kernel file in argus/frontend/parse.py, the shapes of `argus run` in argus/cli/run_cmd.py.
The layout algebra imports nothing of Argus and keeps its own bounds on layout text and
drawings (argus/layout/notation.py, argus/layout/draw.py). Imports nothing.
"""

# --- kernel files -------------------------------------------------------------------
MAX_SOURCE_BYTES = 1 << 20      # one kernel file: the library's largest is under 20 KB
MAX_EXPRESSION_DEPTH = 100      # nesting of one statement's syntax tree (a chain of 100
                                # `+` terms or of 100 parentheses): deeper is split into steps
MAX_MBARRIER_ARRAY = 256       # mbarriers of one array: a ring has one or two per stage;
                                # the protocol pass checks each apart (about 15 ms each)
MAX_SOURCE_LINE_SHOWN = 160     # characters of a source line quoted under a diagnostic

# --- argus run (the interpreter on concrete shapes) ---------------------------------
MAX_SHAPE_EXTENT = 2 ** 31 - 1  # one shape symbol: tensor indices are int32 on the device
MAX_RUN_ELEMENTS = 1 << 26      # elements of all tensors of one run (64 Mi: about 1 GiB
                                # with the fp64 reference); the interpreter is for small shapes
REFERENCE_SECONDS = 120         # the file's reference (and inputs) in its isolated child
REFERENCE_MEMORY_BYTES = 16 << 30   # address space of that child
