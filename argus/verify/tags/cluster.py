"""Thread-block clusters in the tag pass: the rank, the cluster walk, and what a peer block
computes.

The rank. `cluster_rank()` is one value per block, 0 <= rank < C (C = blocks per cluster,
at most 8: resources.cluster). How it is represented depends on how the kernel walks its
tiles, because what tells two writers apart must be what really differs between blocks:
  - a kernel with a `schedule(..., by="cluster")`: the rank is a free variable `rank`
    below C. Both blocks of a cluster visit the same cluster tiles at the same steps, so
    (cluster tile, rank) names a block's work, and `rank` is part of a store's identity
    inside such a schedule (store.py, writers.py);
  - otherwise (a `by="block"` schedule, or block ids): the rank is the block's position in
    its cluster, a term over the block variables (`block` of the walk, or block_x/y/z),
    exact for a grid of constant extents; a free variable below C (told apart per writer,
    never an identity) when the grid is symbolic.

The cluster walk. `schedule(..., by="cluster")` is walked by the cluster: its walker
variable is `cluster` (below the number of clusters, grid size / C) instead of `block`;
the bijection lemma (schedule.py) is over cluster tiles, and the tile body is verified for
free tile coordinates and a free rank.

Peers. A multicast TMA load issued by block b of the cluster lands in every block whose
bit is set in its mask (bands.py). What block b computed is the issuer's copy of the
load's terms: the rank is b; with a cluster walk everything else is shared (the same
cluster tile, the same step); without one, block b walks its own tiles, so the walk's
block variable, its tile coordinates and the block ids are fresh copies (any block of
the grid whose rank is b). Issuers are ENUMERATED (b = 0 .. C-1): the stage of block r is
the union of what the C issuers put there, and enumerating them avoids a quantifier.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import z3

from argus.verify.smt import bv

from . import scalars


@dataclass
class Cluster:
    size: int                      # blocks per cluster
    dims: tuple[int, int, int]     # the cluster shape
    walks: bool                    # the kernel has a schedule(by="cluster")
    rank: object = None            # the rank term (0 when size == 1)
    derived_ids: bool = False      # block_id() is computed from the walker variables


def setup(w) -> Cluster:
    dims = tuple(int(c) for c in w.kernel.launch.cluster) + (1,) * (3 - len(w.kernel.launch.cluster))
    size = dims[0] * dims[1] * dims[2]
    walks = any(op.opcode == "schedule" and op.attrs.get("by") == "cluster"
                for op in w.kernel.walk())
    return Cluster(size, dims, walks, 0 if size == 1 else None)


def rank(w):
    """The term of cluster_rank() (created on first use)."""
    c = w.cluster
    if c.rank is not None:
        return c.rank
    if c.walks or not _grid_known(w):
        c.rank = w.ctx.var("rank", "block", upper=c.size)
    elif any(op.opcode == "schedule" for op in w.kernel.walk()):
        c.rank = _rank_of_linear(w, walker_var(w, "block"))
    else:
        c.rank = _rank_of_ids(w)
    return c.rank


def rank_is_var(w) -> bool:
    return "rank" in w.ctx.vars and w.cluster.rank is not None and \
        not isinstance(w.cluster.rank, int) and w.cluster.rank.eq(w.ctx.vars["rank"].term)


def _grid_known(w) -> bool:
    return all(isinstance(g, int) for g in w.grid)


def _grid3(w) -> tuple[int, int, int]:
    g = tuple(w.grid) + (1,) * (3 - len(w.grid))
    return g[0], g[1], g[2]


def _rank_of_coords(w, xyz):
    cx, cy, cz = w.cluster.dims
    lx, ly, lz = (scalars.binary(w.ctx, "mod", x, c) if c > 1 else 0
                  for x, c in zip(xyz, (cx, cy, cz)))
    inner = scalars.binary(w.ctx, "add", ly, scalars.binary(w.ctx, "mul", lz, cy))
    return scalars.binary(w.ctx, "add", lx, scalars.binary(w.ctx, "mul", inner, cx))


def _rank_of_linear(w, block):
    """The rank of linear block `block` (x fastest) in a grid of constant extents."""
    gx, gy, _ = _grid3(w)
    x = scalars.binary(w.ctx, "mod", block, gx)
    rest = scalars.binary(w.ctx, "floordiv", block, gx)
    y = scalars.binary(w.ctx, "mod", rest, gy)
    z = scalars.binary(w.ctx, "floordiv", rest, gy)
    return _rank_of_coords(w, (x, y, z))


def _rank_of_ids(w):
    xyz = []
    for axis, c in zip("xyz", w.cluster.dims):
        xyz.append(block_id(w, axis) if c > 1 else 0)
    return _rank_of_coords(w, tuple(xyz))


def block_id(w, axis: str):
    """The term of block_id(axis), shared with walker.op_block_id: a variable of its own,
    or, when the kernel walks a schedule over a grid of constant extents, the block's
    coordinate computed from the walk's own variables (`block_coordinates`)."""
    key = ("block_id", axis)
    if key not in w.loop_vars:
        derived = block_coordinates(w)
        if derived is not None:
            w.cluster.derived_ids = True
            w.loop_vars[key] = (derived["xyz".index(axis)],)
        else:
            i = "xyz".index(axis)
            upper = w.grid[i] if i < len(w.grid) else 1
            w.loop_vars[key] = (w.ctx.var(f"block_{axis}", "block", upper=upper),)
    return w.loop_vars[key][0]


def block_coordinates(w):
    """(x, y, z) of this walk's block as terms over the walker variables, None when they
    are free variables of their own. A schedule walks with the linear block index `block`
    (x fastest) or, by="cluster", with the linear cluster index `cluster` and the `rank`
    (the interpreter's and the hardware's numbering: interp/cluster.py). The ids are then
    what they are, not unrelated variables: `block_id("x") % CM` is the rank of a 1-D
    grid, and two blocks with the same (cluster, rank) are one block."""
    if not _grid_known(w) or not any(op.opcode == "schedule" for op in w.kernel.walk()):
        return None
    gx, gy, gz = _grid3(w)
    cx, cy, cz = w.cluster.dims
    mod = lambda a, b: scalars.binary(w.ctx, "mod", a, b) if b > 1 else 0
    div = lambda a, b: scalars.binary(w.ctx, "floordiv", a, b) if b > 1 else a
    add = lambda a, b: scalars.binary(w.ctx, "add", a, b)
    mul = lambda a, b: scalars.binary(w.ctx, "mul", a, b)
    if w.cluster.walks and w.cluster.size > 1:
        if gx % cx or gy % cy or gz % cz:
            return None
        c, r = walker_var(w, "cluster"), rank(w)
        nx, ny = gx // cx, gy // cy
        home = (mod(c, nx), mod(div(c, nx), ny), div(c, nx * ny))
        local = (mod(r, cx), mod(div(r, cx), cy), div(r, cx * cy))
        return tuple(add(mul(h, k), l) for h, k, l in zip(home, (cx, cy, cz), local))
    b = walker_var(w, "block")
    return (mod(b, gx), mod(div(b, gx), gy), div(b, gx * gy))


# -- the walk ----------------------------------------------------------------------------

def walker(w, by: str):
    """(name of the walker variable, number of walkers) of a schedule walked by `by`."""
    if by == "cluster" and w.cluster.size > 1:
        return "cluster", scalars.binary(w.ctx, "floordiv", w.num_blocks, w.cluster.size)
    return "block", w.num_blocks


def walker_var(w, name: str):
    if name not in w.ctx.vars:
        count = walker(w, "cluster" if name == "cluster" else "block")[1]
        w.ctx.var(name, "block", upper=count)
    return w.ctx.vars[name].term


def identity(w) -> tuple[str, ...]:
    """Variables that tell writers apart besides tiles and loop counters: the rank inside
    a cluster walk."""
    scheduled = [v for v in w.scope_vars() if v in w.schedules]
    if not scheduled and _ids_derived(w):
        # outside any schedule, block ids computed from the walker variables: those
        # variables are what tells two blocks apart (block_x is no variable of its own)
        return tuple(n for n in ("block", "cluster", "rank") if n in w.ctx.vars)
    if w.cluster.size == 1 or not rank_is_var(w):
        return ()
    inside = any(w.schedules[v].walker == "cluster" for v in scheduled)
    return ("rank",) if inside else ()


def _ids_derived(w) -> bool:
    return w.cluster.derived_ids


def witness_choices(w, rec) -> list[list]:
    """The values a coverage witness tries for the rank of a writer (store identity):
    every rank, each a substitution list; [[]] when the rank identifies nothing. The
    rank is enumerated rather than divided out of the destination, so that two writer
    variables with the same coefficient (tm = cm + rank) do not hide a writer."""
    if "rank" not in rec.identity or not rank_is_var(w):
        return [[]]
    rank_term = w.ctx.vars["rank"].term
    return [[(rank_term, bv(b))] for b in range(w.cluster.size)]


def fixed(rec, pairs):
    """The store record with the pairs substituted into its destination."""
    if not pairs:
        return rec
    return replace(rec, dst=tuple(z3.substitute(bv(d), *pairs) for d in rec.dst))


def per_writer(w) -> tuple[str, ...]:
    """Variables each writer has its own value of (copied in the race check): the walker
    variables and, where it identifies nothing, the rank."""
    return tuple(n for n in ("block", "cluster", "rank") if n in w.ctx.vars)


def describe(w, model, value) -> dict:
    """{"cluster": c, "rank": r} of a model, for counterexamples of clustered kernels."""
    if w.cluster.size == 1:
        return {}
    out = {}
    if "cluster" in w.ctx.vars:
        out["cluster"] = value(model, w.ctx.vars["cluster"].term)
    if w.cluster.rank is not None and not isinstance(w.cluster.rank, int):
        out["rank"] = value(model, w.cluster.rank)
    return out


def block_of(w, model, value):
    """The linear block index a cluster-walk model names (cluster, rank), or None."""
    if w.cluster.size == 1 or "cluster" not in w.ctx.vars or not _grid_known(w):
        return None
    gx, gy, gz = _grid3(w)
    cx, cy, cz = w.cluster.dims
    c = value(model, w.ctx.vars["cluster"].term)
    r = value(model, w.cluster.rank)
    nx, ny = gx // cx, gy // cy
    hx, hy, hz = c % nx, (c // nx) % ny, c // (nx * ny)
    lx, ly, lz = r % cx, (r // cx) % cy, r // (cx * cy)
    x, y, z = hx * cx + lx, hy * cy + ly, hz * cz + lz
    return (x + gx * (y + gy * z),)


# -- peers -------------------------------------------------------------------------------

@dataclass
class Issuer:
    """Block b of the cluster as the issuer of a load the reader (this walk's block) sees.

    own: a Bool, "the reader is block b"; then the terms are the reader's own with the
    rank b. Otherwise: `pairs` substitute the rank by b and the block's own variables by
    fresh copies (whose rank is b: a fact of the context)."""
    b: int
    own: object
    own_pairs: list
    pairs: list

    def term(self, x):
        if isinstance(x, int):
            return x
        own = _sub(x, self.own_pairs)
        return own if not self.pairs else z3.If(self.own, own, _sub(x, self.pairs))

    def when(self, x):
        """A Bool over the issuer's variables, as the reader sees it."""
        own = _sub(x, self.own_pairs)
        return own if not self.pairs else z3.If(self.own, own, _sub(x, self.pairs))


def _sub(x, pairs):
    if not pairs:
        return x if not isinstance(x, int) else bv(x)
    if isinstance(x, int):
        return bv(x)
    if isinstance(x, z3.BoolRef):
        return z3.substitute(x, *pairs)
    return z3.substitute(bv(x), *pairs)


def _own_vars(w) -> list[str]:
    """A block's own variables besides the rank: what a peer has a different value of."""
    names = [n for n in w.ctx.vars if n.startswith("block_")]
    if "block" in w.ctx.vars:
        names.append("block")
    for i, info in w.schedules.items():
        if info.walker != "cluster":
            names += list(info.coords)
    return names


def issuers(w) -> list[Issuer]:
    c = w.cluster
    if c.size == 1:
        return [Issuer(0, z3.BoolVal(True), [], [])]
    r = rank(w)
    out = []
    own_vars = _own_vars(w)
    for b in range(c.size):
        own = bv(r) == b
        own_pairs = [(w.ctx.vars["rank"].term, bv(b))] if rank_is_var(w) else []
        if not own_vars:
            out.append(Issuer(b, own, own_pairs, []))
            continue
        fresh = f"@{b}" not in w.ctx._copied
        copies = w.ctx.copy_vars(own_vars, f"@{b}")
        if fresh and not rank_is_var(w):       # the copy is a block of rank b
            w.ctx.facts.append(_sub(bv(r), copies) == b)
        out.append(Issuer(b, own, own_pairs, own_pairs + copies))
    return out
