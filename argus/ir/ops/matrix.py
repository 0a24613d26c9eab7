"""ldmatrix / stmatrix: 8x8 matrices between shared memory and warp registers."""

from .spec import FRAG, STILE, arg, op

SPECS = [
    op("ldmatrix", "matrix", arg("src", *STILE), results=1, reads=("src",),
       doc="attrs: num, trans"),
    op("stmatrix", "matrix", arg("dst", *STILE), arg("src", *FRAG), reads=("src",),
       writes=("dst",), doc="attrs: num, trans"),
]
