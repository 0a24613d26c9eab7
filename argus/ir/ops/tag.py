"""Tags: user fields added to the tag of every element, and tag assertions."""

from .spec import arg, op

ANY = ("FragmentType", "SmemTileType", "GlobalTileType", "GlobalTensorType", "ScalarType",
       "imm")

SPECS = [
    op("tag.add", "tag", arg("x", "FragmentType", "SmemTileType"),
       arg("fields", "ScalarType", "FragmentType", "imm", variadic=True), results=1,
       view=True, doc="attrs: names; the result holds x's data with extra tag fields"),
    op("tag.assert", "tag", arg("values", *ANY, variadic=True), view=True,
       doc="attrs: pred (a TagExpr over values), text"),
    op("tag.heads", "tag", arg("tensor", "GlobalTensorType"), view=True,
       doc="attrs: cols, group; the tensor's columns are heads of cols columns, head h "
       "meeting head h // group of the tensors declared with group 1 (GQA; verifier only)"),
    op("tag.assume", "tag", arg("values", *ANY, variadic=True), view=True,
       doc="attrs: pred (tag(x).field == expr conjunctions), text; the verifier takes it as "
       "given for every element of x (e.g. the experts a router sorted rows by)"),
]
