"""Tags and tag assertions: the data-flow invariants.

Default tags: element (i, j) of global tensor A is tagged tensor=A, row=i, col=j (more
generally coordinate fields 0..rank-1, named row and col for 2-D). Tags move with data
through copies, TMA, ldmatrix, math and reductions; wgmma's result element (m, n) carries
row = A.row, col = B.row and the set of k it summed.
"""

from ._stub import surface


@surface
def add_tag(x, **fields):
    """x with extra tag fields on every element, e.g. add_tag(s, iteration=j, stage=s)."""


@surface
def heads(x, cols, group=1):
    """Declares that the columns of kernel tensor x are heads of `cols` columns and that
    head h of x reads (or is computed from) head h // group of the tensors declared with
    group 1: GQA's query side is heads(Q, HD, group=G), its KV side heads(K, HD). For the
    verifier only (no code): a column c of x is tagged with the column of that KV head it
    meets, (c // cols // group) * cols + c % cols, and every value stored into a declared
    tensor must come from loads of the heads the relation names."""


@surface
def tag(x):
    """In a tag_assert: the tag of each element of x; read fields as tag(x).row, and the
    tensor x was loaded from as tag(x).tensor (compared with a kernel tensor by name:
    tag(b_s[s]).tensor == B)."""


@surface
def coord(x):
    """In a tag_assert: the coordinates of each element of x (coord(dst)[0] is its row)."""


@surface
def tag_assert(pred):
    """Assert a relation over tags at this program point, for every element, thread, block
    and iteration, e.g. tag_assert(tag(out).row == coord(dst)[0])."""
