"""Structure: ids, loops, conditionals, roles, elect-one, persistent schedules, assume."""

from .spec import SCALAR, arg, op

SPECS = [
    op("block_id", "structure", results=1, doc="attrs: axis (x|y|z)"),
    op("cluster_rank", "structure", results=1, doc="this block's rank in its cluster"),
    op("warpgroup_index", "structure", results=1,
       doc="index of the executing warpgroup within its role (0-based)"),
    op("for", "structure", arg("start", *SCALAR), arg("stop", *SCALAR), arg("step", *SCALAR),
       regions=1, region_args=1),
    op("if", "structure", arg("cond", *SCALAR), regions=2),
    op("role", "structure", regions=1, doc="attrs: name, warpgroups, regs"),
    op("elect_one", "structure", regions=1, doc="the body runs on one thread per attrs.scope (block|warpgroup|warp)"),
    op("schedule", "structure", arg("extents", *SCALAR, variadic=True), regions=1,
       region_args=-1, doc="region args: local iteration, then one coordinate per extent; "
       "attrs: order, group, and by=\"cluster\" when the grid's clusters (not its blocks) "
       "share the tiles, every block of a cluster visiting the same steps"),
    op("walked", "structure", arg("weight", *SCALAR), arg("iteration", *SCALAR), results=1,
       doc="inside a schedule's body (not in a loop or branch of it): the sum of `weight` "
       "over this block's earlier steps of that schedule (0 at its first step), i.e. a "
       "running prefix sum; `iteration` is the schedule's step counter, which the frontend "
       "adds (the sum restarts where it is 0)"),
    op("assume", "structure", arg("cond", *SCALAR),
       doc="a precondition on the launch, e.g. K % 64 == 0"),
]
