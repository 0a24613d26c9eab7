"""Structure and policies: ids, roles, elect-one, persistent schedules, preconditions."""

from ._stub import surface


@surface
def block_id(axis="x"):
    """This block's index along grid axis x, y or z."""


@surface
def cluster_rank():
    """This block's rank inside its thread-block cluster."""


@surface
def warpgroup_index():
    """Inside `with role(...)`: which of the role's warpgroups runs (0-based)."""


@surface
def role(name, warpgroups, regs):
    """`with role("producer", warpgroups=(0,), regs=40):` the body runs only on those
    warpgroups, which set their register budget to `regs` (setmaxnreg)."""


@surface
def elect_one(scope="warpgroup"):
    """`with elect_one():` the body runs on one thread of each warpgroup that reaches it
    (scope="warp": of each warp; scope="block": of the whole block)."""


@surface
def schedule(*extents, order="row_major", group=1):
    """`for i, tm, tn in schedule(M // BM, N // BN, order="grouped", group=8):` a persistent
    tile loop: this block visits tiles of the grid of `extents` in `order` (row_major,
    grouped, swizzled); i counts this block's tiles from 0."""


@surface
def walked(weight):
    """Inside the body of `for i, ... in schedule(...)` (not in a loop or branch of it):
    the sum of `weight` over this block's earlier tiles of that schedule, 0 at i = 0. With
    `weight` the trip count of a pipelined loop over the tile (key blocks of a causal
    attention tile, whose count differs per tile), `walked(nj) + j` is the ring position
    of step j: `for j in range(nj): g = walked(nj) + j` numbers the block's steps
    0, 1, 2, ... across tiles, as `i * nj + j` does when every tile has the same nj."""


@surface
def pipeline(n, stages, start=0):
    """`for k, s, phase in pipeline(KT, stages=S, start=i * KT):` k runs over range(n);
    with g = start + k, the stage is s = g % stages and the parity phase = (g // stages) & 1.
    A convenience: it expands to the same IR as writing those lines by hand, and is
    verified like them."""


@surface
def assume(cond):
    """A precondition of the launch (e.g. K % BK == 0); checked on the host, used by the
    verifier. A condition on tags, `assume(tag(x).field == expr)`, states a fact about every
    element of tensor, segment or tile x that the verifier takes as given: e.g. what a
    router guarantees, `assume(tag(segment(X, first, rows)).expert == e)` (the rows of
    expert e), or a layout convention, `assume(tag(W).expert == coord(W)[0] // N)`."""


@surface
def cdiv(a, b):
    """Ceiling division."""


@surface
def nbytes(x):
    """Static byte size of a shared-memory tile (e.g. for expect_tx)."""
