"""Device-side routing around scan.prefix_sum (declared with the math family): entries of
index vectors as uniform scalars, counts padded to whole tiles, and row segments of a
global tensor (the rows one expert group owns in a grouped GEMM)."""

from .spec import FRAG, SCALAR, arg, op

SPECS = [
    op("indices.element", "math", arg("v", "IndexVectorType", *FRAG), arg("i", *SCALAR),
       results=1, doc="entry i of an index vector or 1-D int32 fragment, a uniform scalar"),
    op("indices.from_frag", "math", arg("x", *FRAG), results=1,
       doc="a 1-D int32 fragment as an index vector"),
    op("indices.round_up", "math", arg("v", "IndexVectorType"), results=1,
       doc="each entry rounded up to a multiple of attrs.multiple"),
    op("segment", "memory", arg("tensor", "GlobalTensorType"), arg("start", *SCALAR),
       arg("rows", *SCALAR), results=1, view=True,
       doc="rows [start, start + rows) of tensor as a tensor; boxes past its last row read "
       "zeros and are not written (tail rows masked); coordinates name the tensor's rows"),
]
